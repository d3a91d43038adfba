// Plays a game through webhooks alone: no Observe stream, no polling.
//
// Usage: TABULA_KEY=tbk_... node dist/src/webhook_player.js HOST:PORT
//
// A backend of a correspondence site works like this: it registers a webhook for its tenant
// (AdminService.AddWebhook, with the tenant's API key), creates games, and waits. When Tabula POSTs
// a `turn_started` notification, the receiver verifies the signature, drops a notification it has
// already handled (by `event_id`: delivery is at least once), and plays the whole turn of the seat
// it is told of (GetView, Act, again while that seat is still to act). `game_finished` ends it.
//
// The receiver listens on 127.0.0.1, so the server must run with `--webhook-allow-private` (a real
// receiver has a public https URL).

import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AdminService } from "../gen/tabula/v1/admin_pb.js";
import { GameKind, GameService, WebhookEventKind } from "../gen/tabula/v1/tabula_pb.js";
import { bearer, concreteAction, withRetries, type GameClient } from "./tabula_client.js";

/** A notification whose timestamp is further than this from our clock is refused: a replay. */
const TOLERANCE_S = 300;
/** How long the whole game may take. */
const GAME_TIMEOUT_MS = 120_000;

/** The JSON body of a notification (README, *Webhooks*). */
interface Notification {
  event_id: string;
  kind: string;
  game_id: string;
  version: number;
  seats: { seat: number; external_id: string }[];
  winners?: number[];
}

/**
 * Whether `header` (`Tabula-Signature: t=<unix s>,v1=<hex>`) signs `body` (the raw bytes) with
 * `secret`: HMAC-SHA256 over "<t>.<body>", compared in constant time, and `t` within TOLERANCE_S
 * of now. A forged body fails the HMAC; a replayed request has an old `t`, and changing `t` breaks
 * the HMAC too.
 */
export function verify(secret: string, header: string, body: Buffer, nowS = Date.now() / 1000): boolean {
  const fields = new Map(
    header.split(",").map((part) => part.split("=", 2) as [string, string]),
  );
  const timestamp = Number(fields.get("t"));
  const given = Buffer.from(fields.get("v1") ?? "", "hex");
  if (!Number.isInteger(timestamp) || Math.abs(nowS - timestamp) > TOLERANCE_S) return false;
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * An HTTP server on a free loopback port that verifies each POST with `webhook.secret` (set once
 * AddWebhook returned it) and hands verified notifications to `deliver`; a bad signature gets 401
 * (Tabula retries a non-2xx answer, then keeps it as a dead letter).
 */
async function receiver(webhook: { secret?: string }, deliver: (note: Notification) => void): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      const signature = String(request.headers["tabula-signature"] ?? "");
      if (!webhook.secret || !verify(webhook.secret, signature, body)) {
        response.writeHead(401).end();
        return;
      }
      deliver(JSON.parse(body.toString("utf8")) as Notification);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/** Plays every move of `seat`'s turn: while it is the seat to act. */
async function playTurn(client: GameClient, gameId: string, seat: number, token: string): Promise<void> {
  for (;;) {
    const view = await withRetries(() => client.getView({ gameId }, bearer(token)));
    if (view.status?.finished || view.status?.toAct !== seat || view.legalActions.length === 0) return;
    const entry = view.legalActions[Math.floor(Math.random() * view.legalActions.length)];
    await withRetries(() =>
      client.act(
        {
          gameId,
          action: concreteAction(entry),
          expectedVersion: view.version,
          requestId: `seat${seat}-v${view.version}`,
        },
        bearer(token),
      ),
    );
  }
}

async function main(): Promise<void> {
  const server = process.argv[2];
  const key = process.env.TABULA_KEY;
  if (!server || process.argv.length !== 3 || !key) {
    throw new Error("usage: TABULA_KEY=tbk_... webhook_player.js HOST:PORT");
  }
  const transport = createGrpcTransport({ baseUrl: `http://${server}` });
  const admin = createClient(AdminService, transport);
  const client = createClient(GameService, transport);

  // Notifications are handled one after another, in the order they arrive.
  const queue: Notification[] = [];
  let wake: (() => void) | undefined;
  const webhook: { secret?: string } = {};
  const http = await receiver(webhook, (note) => {
    queue.push(note);
    wake?.();
  });
  const port = (http.address() as AddressInfo).port;
  const added = await withRetries(() =>
    admin.addWebhook(
      {
        url: `http://127.0.0.1:${port}/tabula`,
        kinds: [WebhookEventKind.TURN_STARTED, WebhookEventKind.GAME_FINISHED],
      },
      bearer(key),
    ),
  );
  webhook.secret = added.secret;
  // Every replica reads the tenant's webhooks within 2 seconds.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const game = await withRetries(() =>
    client.createGame(
      {
        config: { game: { case: "mediciVsStrozzi", value: {} } },
        players: [
          { seat: 0, displayName: "Alice", externalId: "alice" },
          { seat: 1, displayName: "Bob", externalId: "bob" },
        ],
      },
      bearer(key),
    ),
  );
  const tokens = new Map(game.seats.map((seat) => [seat.seat, seat.token]));
  const seen = new Set<string>();
  const deadline = Date.now() + GAME_TIMEOUT_MS;
  let turns = 0;
  try {
    for (;;) {
      while (queue.length === 0) {
        if (Date.now() > deadline) throw new Error(`game ${game.gameId}: no notification for too long`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
      }
      const note = queue.shift() as Notification;
      if (seen.has(note.event_id) || note.game_id !== game.gameId) continue;
      seen.add(note.event_id);
      if (note.kind === "turn_started") {
        const seat = note.seats[0].seat;
        await playTurn(client, game.gameId, seat, tokens.get(seat) ?? "");
        turns += 1;
      } else if (note.kind === "game_finished") {
        console.log(
          `finished GAME_KIND_${GameKind[game.game]} game ${game.gameId}: ${turns} turns told by ` +
            `webhook, winners ${(note.winners ?? []).join(" ")}`,
        );
        return;
      }
    }
  } finally {
    await admin.removeWebhook({ webhookId: added.webhook?.webhookId ?? "" }, bearer(key));
    http.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
