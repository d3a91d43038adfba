// Plays one game of every kind a Tabula server hosts, to the end, with no per-game code.
//
// Usage: node dist/src/play_every_game.js HOST:PORT     (after `npm ci && npm run build`)
//
// The games are found by iterating the cases of `tabula.v1.GameConfig.game` through protobuf-es
// reflection; a config with a `players` field gets the smallest player count from 2 up that the
// server accepts. Each game is then played through GetView/Act only: `status.to_act` says which
// seat must act, that seat's `legal_actions` list its moves, and an entry with an `amount_range`
// gets a random amount written into the field its `amount_field` path names (proto field names,
// followed by reflection). Every Act carries `expected_version` and a `request_id`, so a retry
// after a lost answer or a rate limit is safe.
//
// The client code is generated from the repository's proto/ directory by `npm run generate`
// (buf + protoc-gen-es), not committed. Transport: gRPC over HTTP/2 (Connect's Node transport).

import { create, type DescField } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  GameConfigSchema,
  GameKind,
  GameService,
  type CreateGameResponse,
  type GameConfig,
  type GameStatus,
} from "../gen/tabula/v1/tabula_pb.js";
import {
  bearer,
  CALL_TIMEOUT_MS,
  concreteAction,
  withRetries,
  type GameClient,
} from "./tabula_client.js";

/** Player counts tried, in order, for games whose config has a `players` field. */
const PLAYER_COUNTS = [2, 3, 4, 5, 6, 7, 8];
/** More moves than any game takes: a game still running after this many is a bug. */
const MAX_MOVES = 20_000;
/** A `GameConfig` choosing the oneof case `gameCase`, with `players` set when given. */
function gameConfig(gameCase: DescField & { fieldKind: "message" }, players?: number): GameConfig {
  const inner = reflect(gameCase.message, create(gameCase.message));
  const playersField = gameCase.message.fields.find((field) => field.name === "players");
  if (players !== undefined && playersField) inner.set(playersField, players);
  const config = reflect(GameConfigSchema, create(GameConfigSchema));
  config.set(gameCase, inner);
  return config.message as GameConfig;
}

/** Creates a game of the kind `gameCase` picks; the CreateGame answer. */
async function createGame(
  client: GameClient,
  gameCase: DescField & { fieldKind: "message" },
): Promise<CreateGameResponse> {
  const hasPlayers = gameCase.message.fields.some((field) => field.name === "players");
  const counts: (number | undefined)[] = hasPlayers ? PLAYER_COUNTS : [undefined];
  for (const players of counts) {
    try {
      const config = gameConfig(gameCase, players);
      return await withRetries(() => client.createGame({ config }, { timeoutMs: CALL_TIMEOUT_MS }));
    } catch (error) {
      // A player count outside the game's range is a config error: try the next one.
      if (hasPlayers && ConnectError.from(error).code === Code.InvalidArgument) continue;
      throw error;
    }
  }
  throw new Error(`${gameCase.name}: the server accepts no player count in ${PLAYER_COUNTS}`);
}

/** Plays `game` to the end; the final status and the number of moves made. */
async function play(client: GameClient, game: CreateGameResponse): Promise<[GameStatus, number]> {
  const tokens = new Map(game.seats.map((seat) => [seat.seat, seat.token]));
  let status = game.status;
  let moves = 0;
  while (status?.toAct !== undefined) {
    if (moves >= MAX_MOVES) throw new Error(`game ${game.gameId} did not end within ${MAX_MOVES} moves`);
    const seat = status.toAct;
    const options = bearer(tokens.get(seat) ?? "");
    const view = await withRetries(() => client.getView({ gameId: game.gameId }, options));
    if (view.legalActions.length === 0) {
      throw new Error(`game ${game.gameId}: seat ${seat} must act but lists no move`);
    }
    const entry = view.legalActions[Math.floor(Math.random() * view.legalActions.length)];
    const request = {
      gameId: game.gameId,
      action: concreteAction(entry),
      expectedVersion: view.version,
      requestId: `seat${seat}-v${view.version}`,
    };
    const answer = await withRetries(() => client.act(request, options));
    status = answer.status;
    moves += 1;
  }
  if (!status) throw new Error(`game ${game.gameId}: an answer without a status`);
  return [status, moves];
}

async function main(): Promise<void> {
  const server = process.argv[2];
  if (!server || process.argv.length !== 3) throw new Error("usage: play_every_game.js HOST:PORT");
  const transport = createGrpcTransport({ baseUrl: `http://${server}` });
  const client = createClient(GameService, transport);
  const oneof = GameConfigSchema.oneofs.find((candidate) => candidate.name === "game");
  if (!oneof) throw new Error("tabula.v1.GameConfig has no oneof `game`");
  for (const gameCase of oneof.fields) {
    if (gameCase.fieldKind !== "message") continue;
    const game = await createGame(client, gameCase);
    const [status, moves] = await play(client, game);
    if (!status.finished) throw new Error(`${gameCase.name}: game ${game.gameId} stopped unfinished`);
    console.log(
      `finished GAME_KIND_${GameKind[game.game]} game ${game.gameId}: ${game.seats.length} players, ` +
        `${moves} moves, scores ${status.scores.join(" ")}, winners ${status.winners.join(" ")}`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
