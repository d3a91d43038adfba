// A page served from its own origin that plays Tabula over gRPC-Web, as a real web client would:
// it creates a Medici vs Strozzi game, follows it with Observe (a server stream) as a spectator,
// plays moves picked from the legal actions the server lists, checks that the stream showed every
// move, and that a stale move's ABORTED status and its `tabula-current-version` are readable.
//
// The client is generated from the protos (protobuf-es + Connect-Web); the page touches only the
// core `tabula.v1` messages, so it does not depend on how the per-game packages are laid out.
//
// Query parameters: `server` (the replica's URL, required), `moves` (how many to play, default 6),
// `deadline_ms` (the whole run's deadline, default 20000).
// It reports through the document title (`PASS` or `FAIL`) and `window.tabulaOutcome`, which
// tests/browser/drive.mjs reads.

import { equals, toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { ActionSchema, GameService, type Action, type LegalAction } from "../gen/tabula/v1/tabula_pb";

/** What the page reports to the test. */
interface Outcome {
  ok: boolean;
  /** The step that failed, or "done". */
  stage: string;
  error?: string;
  /** The gRPC code of a failed call, by name. */
  code?: string;
  gameId?: string;
  /** Moves played: the version each produced and the seat that made it. */
  played: { version: string; seat: number }[];
  /** Versions the Observe stream delivered with a move. */
  observed: string[];
  /** What a move sent for a stale version was told. */
  conflict?: { code: string; currentVersion: string | null };
}

declare global {
  interface Window {
    tabulaOutcome?: Outcome;
  }
}

const params = new URLSearchParams(location.search);
const server = params.get("server") ?? "";
const movesWanted = Number(params.get("moves") ?? "6");
const deadlineMs = Number(params.get("deadline_ms") ?? "20000");

const outcome: Outcome = { ok: false, stage: "start", played: [], observed: [] };

function report(): void {
  window.tabulaOutcome = outcome;
  const verdict = document.getElementById("verdict");
  if (verdict) {
    verdict.textContent = outcome.ok ? "PASS" : `FAIL at ${outcome.stage}`;
    verdict.className = outcome.ok ? "pass" : "fail";
  }
  const text = document.getElementById("outcome");
  if (text) text.textContent = JSON.stringify(outcome, null, 2);
  document.title = outcome.ok ? "PASS" : "FAIL";
}

function showMove(line: string): void {
  const item = document.createElement("li");
  item.textContent = line;
  document.getElementById("moves")?.append(item);
}

/** Polls `done` every 20 ms until it holds, failing at the page's deadline. */
async function until(done: () => boolean, what: string, deadline: number): Promise<void> {
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`deadline passed waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function play(): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  if (!server) throw new Error("no ?server= given");
  const client = createClient(GameService, createGrpcWebTransport({ baseUrl: server }));

  outcome.stage = "CreateGame";
  const created = await client.createGame({
    config: { game: { case: "mediciVsStrozzi", value: {} } },
  });
  const gameId = created.gameId;
  outcome.gameId = gameId;
  const tokens = new Map(created.seats.map((seat) => [seat.seat, seat.token]));
  const asSeat = (seat: number) => ({
    headers: { authorization: `Bearer ${tokens.get(seat) ?? ""}` },
  });

  // Follow the game as a spectator from its start, while it is being played.
  outcome.stage = "Observe";
  const stop = new AbortController();
  const seen = new Map<bigint, { seat: number; action?: Action }>();
  let streamError: unknown;
  const following = (async () => {
    try {
      for await (const message of client.observe({ gameId, fromVersion: 0n }, { signal: stop.signal })) {
        if (message.action) {
          seen.set(message.version, { seat: message.action.seat, action: message.action.action });
          outcome.observed.push(message.version.toString());
        }
      }
    } catch (error) {
      if (!stop.signal.aborted) streamError = error;
    }
  })();

  // Who acts: the seat whose view lists legal actions (a listed action already carries the
  // smallest amount of its range, so it can be sent as it is).
  outcome.stage = "GetView";
  const findActor = async () => {
    for (const seat of tokens.keys()) {
      const view = await client.getView({ gameId }, asSeat(seat));
      if (view.legalActions.length > 0) return { seat, legal: view.legalActions, version: view.version };
    }
    return undefined;
  };
  let actor: { seat: number; legal: LegalAction[]; version: bigint } | undefined = await findActor();
  const played: { version: bigint; seat: number; action: Action }[] = [];
  for (let move = 0; move < movesWanted && actor; move++) {
    outcome.stage = `Act #${move + 1}`;
    // Vary the choice so that more than one kind of move is played.
    const listed = actor.legal[move % actor.legal.length];
    if (!listed.action) throw new Error("a legal action without its action");
    const answer = await client.act(
      { gameId, action: listed.action, expectedVersion: actor.version, requestId: `browser-move-${move}` },
      asSeat(actor.seat),
    );
    played.push({ version: answer.version, seat: actor.seat, action: listed.action });
    outcome.played.push({ version: answer.version.toString(), seat: actor.seat });
    showMove(`version ${answer.version}: seat ${actor.seat} played ${toJsonString(ActionSchema, listed.action)}`);
    actor = answer.legalActions.length > 0
      ? { seat: actor.seat, legal: answer.legalActions, version: answer.version }
      : await findActor();
  }
  if (played.length === 0) throw new Error("no move could be played");

  // A move for a version the game has left is ABORTED, and says where the game is: the status
  // and `tabula-current-version` are readable only if the replica exposes them to scripts.
  const last = played[played.length - 1];
  if (actor?.legal[0]?.action) {
    outcome.stage = "stale Act";
    try {
      await client.act(
        { gameId, action: actor.legal[0].action, expectedVersion: 0n, requestId: "browser-stale" },
        asSeat(actor.seat),
      );
      throw new Error("a move for version 0 was accepted");
    } catch (error) {
      const failure = ConnectError.from(error);
      outcome.conflict = {
        code: Code[failure.code],
        currentVersion: failure.metadata.get("tabula-current-version"),
      };
      if (failure.code !== Code.Aborted || outcome.conflict.currentVersion !== last.version.toString()) {
        throw new Error(`a stale move: expected ABORTED at version ${last.version}, got ${failure.message}`);
      }
    }
  }

  outcome.stage = "Observe shows every move";
  await until(() => streamError !== undefined || played.every((move) => seen.has(move.version)), "the moves on Observe", deadline);
  stop.abort();
  await following;
  if (streamError !== undefined) throw streamError;
  for (const move of played) {
    const shown = seen.get(move.version);
    if (shown?.seat !== move.seat || !shown.action || !equals(ActionSchema, shown.action, move.action)) {
      throw new Error(`Observe showed version ${move.version} differently from the move played`);
    }
  }
  outcome.stage = "done";
  outcome.ok = true;
}

play()
  .catch((error: unknown) => {
    outcome.ok = false;
    const failure = ConnectError.from(error);
    outcome.code = Code[failure.code];
    outcome.error = failure.message;
  })
  .finally(report);
