// Live updates: every game this browser shows, on as few connections as possible.
//
// A browser opens at most six HTTP/1.1 connections to a server, and a stream holds one for as long
// as it runs: with one Observe per tab, the seventh tab waited forever. So every tab of this
// browser hands its game to one shared worker (live-worker.ts), which follows them all with one
// ObserveGames call (up to 16 games a call) and passes each tab its own messages. Where shared
// workers do not exist (some phone browsers) a tab follows its game with its own ObserveGames
// call, which is then as costly as the Observe it replaces.

import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import {
  GameService,
  ObserveRequestSchema,
  ObserveResponseSchema,
  type ObserveResponse,
} from "../gen/tabula/v1/tabula_pb";
import type { FromPage, ToPage } from "./live-protocol";

/** What a stream ended with: nothing (its game ended), or the server's refusal. */
export interface Ended {
  code?: number;
  message?: string;
}

export interface Follow {
  gameId: string;
  token?: string;
  fromVersion: bigint;
  onUpdate: (update: ObserveResponse) => void;
  onEnd: (ended: Ended) => void;
}

let worker: SharedWorker | undefined | null;
/** Set once a server answered that it has no ObserveGames (an older replica): plain Observe. */
let plainObserve = false;
const handlers = new Map<string, Follow>();

function sharedWorker(serverUrl: string): SharedWorker | undefined {
  if (worker === null) return undefined;
  if (worker) return worker;
  if (typeof SharedWorker === "undefined") {
    worker = null;
    return undefined;
  }
  try {
    worker = new SharedWorker(new URL("live-worker.js", location.href), { name: "tabula-live" });
  } catch {
    worker = null;
    return undefined;
  }
  const port = worker.port;
  port.onmessage = (message: MessageEvent<ToPage>) => {
    const data = message.data;
    const follow = handlers.get(data.id);
    if (!follow) return;
    if (data.type === "update") follow.onUpdate(fromBinary(ObserveResponseSchema, data.update));
    else {
      handlers.delete(data.id);
      follow.onEnd({ code: data.code, message: data.message });
    }
  };
  port.start();
  const post = (message: FromPage) => port.postMessage(message);
  // The worker drops a tab that stops saying it is alive (a closed tab says nothing).
  setInterval(() => post({ type: "alive" }), 5_000);
  addEventListener("pagehide", () => post({ type: "leave" }));
  post({ type: "hello", serverUrl });
  return worker;
}

/** Follows one game as `follow` says, until the returned function is called or it ends. */
export function followGame(client: Client<typeof GameService>, serverUrl: string, follow: Follow): () => void {
  const id = `${Date.now().toString(36)}-${crypto.getRandomValues(new Uint32Array(2)).join("")}`;
  if (plainObserve) return followAlone(client, follow);
  // An older server: fall back for this game and every later one.
  const fallBack: Follow = {
    ...follow,
    onEnd: (ended) => {
      if (ended.code !== Code.Unimplemented) return follow.onEnd(ended);
      plainObserve = true;
      stopFollowing = followAlone(client, follow);
    },
  };
  let stopFollowing = followShared(client, serverUrl, id, fallBack);
  return () => stopFollowing();
}

/** `follow` through this browser's shared worker, or this tab's own ObserveGames call. */
function followShared(client: Client<typeof GameService>, serverUrl: string, id: string, follow: Follow): () => void {
  const shared = sharedWorker(serverUrl);
  if (shared) {
    handlers.set(id, follow);
    const request = create(ObserveRequestSchema, { gameId: follow.gameId, fromVersion: follow.fromVersion, narrate: true });
    shared.port.postMessage({ type: "follow", id, token: follow.token ?? "", request: toBinary(ObserveRequestSchema, request) } satisfies FromPage);
    return () => {
      handlers.delete(id);
      shared.port.postMessage({ type: "stop", id } satisfies FromPage);
    };
  }
  // No shared worker: this tab's own call.
  const stop = new AbortController();
  void (async () => {
    try {
      const subscriptions = [{ observe: { gameId: follow.gameId, fromVersion: follow.fromVersion, narrate: true }, token: follow.token ?? "" }];
      for await (const message of client.observeGames({ subscriptions }, { signal: stop.signal })) {
        if (message.update) follow.onUpdate(message.update);
        if (message.ended) {
          follow.onEnd({ code: message.error?.code, message: message.error?.message });
          return;
        }
      }
      follow.onEnd({});
    } catch (error) {
      if (stop.signal.aborted) return;
      const failure = ConnectError.from(error);
      follow.onEnd({ code: failure.code, message: failure.rawMessage });
    }
  })();
  return () => stop.abort();
}

/** `follow` with this tab's own Observe call (a server without ObserveGames). */
function followAlone(client: Client<typeof GameService>, follow: Follow): () => void {
  const stop = new AbortController();
  void (async () => {
    try {
      const headers = follow.token ? { authorization: `Bearer ${follow.token}` } : undefined;
      for await (const update of client.observe({ gameId: follow.gameId, fromVersion: follow.fromVersion, narrate: true }, { headers, signal: stop.signal })) {
        follow.onUpdate(update);
      }
      follow.onEnd({});
    } catch (error) {
      if (stop.signal.aborted) return;
      const failure = ConnectError.from(error);
      follow.onEnd({ code: failure.code, message: failure.rawMessage });
    }
  })();
  return () => stop.abort();
}
