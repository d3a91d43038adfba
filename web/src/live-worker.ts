// The shared worker behind live.ts: one ObserveGames call (per 16 games) for every tab of this
// browser, whatever the number of tabs. When the set of followed games changes, the call is
// opened again with each game from the last version its tab was sent (the tab skips a repeat of
// the version it has), so nothing is missed and no connection is held per tab.

import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GameService, ObserveRequestSchema, ObserveResponseSchema, type ObserveRequest } from "../gen/tabula/v1/tabula_pb";
import type { FromPage, ToPage } from "./live-protocol";

// The shared worker's global scope (its type is in the webworker library, which cannot be
// combined with the page's DOM library in one program): only `onconnect` is used.
const scope = self as unknown as { onconnect: ((event: MessageEvent) => void) | null };

/** Games per call: the server's limit (ObserveGamesRequest.subscriptions). */
const PER_CALL = 16;
/** A tab silent this long has closed: its games are dropped. */
const TAB_TIMEOUT_MS = 20_000;

interface Followed {
  port: MessagePort;
  token: string;
  request: ObserveRequest;
}

let client: Client<typeof GameService> | undefined;
const followed = new Map<string, Followed>();
const lastSeen = new Map<MessagePort, number>();
let calls: AbortController[] = [];
let reopen: ReturnType<typeof setTimeout> | undefined;

function send(port: MessagePort, message: ToPage, transfer: Transferable[] = []): void {
  port.postMessage(message, transfer);
}

/** Opens the calls again for the current set of games, soon (changes come in bursts). */
function scheduleReopen(): void {
  if (reopen !== undefined) return;
  reopen = setTimeout(() => {
    reopen = undefined;
    for (const call of calls) call.abort();
    calls = [];
    const entries = [...followed.entries()];
    for (let start = 0; start < entries.length; start += PER_CALL) void run(entries.slice(start, start + PER_CALL));
  }, 50);
}

async function run(entries: [string, Followed][]): Promise<void> {
  if (!client || entries.length === 0) return;
  const stop = new AbortController();
  calls.push(stop);
  let attempt = 0;
  while (!stop.signal.aborted) {
    try {
      const subscriptions = entries.map(([, entry]) => ({ observe: entry.request, token: entry.token }));
      for await (const message of client.observeGames({ subscriptions }, { signal: stop.signal })) {
        attempt = 0;
        const [id, entry] = entries[message.subscription] ?? [];
        if (!id || !entry || followed.get(id) !== entry) continue;
        if (message.update) {
          // A reopened call starts from here.
          entry.request.fromVersion = message.update.version;
          const bytes = toBinary(ObserveResponseSchema, message.update);
          send(entry.port, { type: "update", id, update: bytes }, [bytes.buffer]);
        }
        if (message.ended) {
          followed.delete(id);
          send(entry.port, { type: "ended", id, code: message.error?.code, message: message.error?.message });
        }
      }
      return;
    } catch (error) {
      if (stop.signal.aborted) return;
      if (ConnectError.from(error).code === Code.Unimplemented) {
        // A replica older than ObserveGames (a rolling upgrade): each tab follows on its own.
        for (const [id, entry] of entries) {
          if (followed.get(id) !== entry) continue;
          followed.delete(id);
          send(entry.port, { type: "ended", id, code: Code.Unimplemented, message: "ObserveGames" });
        }
        return;
      }
      attempt += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 250 * 2 ** attempt)));
    }
  }
}

function dropPort(port: MessagePort): void {
  lastSeen.delete(port);
  let changed = false;
  for (const [id, entry] of followed) {
    if (entry.port === port) {
      followed.delete(id);
      changed = true;
    }
  }
  if (changed) scheduleReopen();
}

scope.onconnect = (event: MessageEvent) => {
  const port = event.ports[0];
  lastSeen.set(port, Date.now());
  port.onmessage = (message: MessageEvent<FromPage>) => {
    const data = message.data;
    lastSeen.set(port, Date.now());
    switch (data.type) {
      case "hello":
        client ??= createClient(GameService, createGrpcWebTransport({ baseUrl: data.serverUrl }));
        break;
      case "follow":
        followed.set(data.id, { port, token: data.token, request: fromBinary(ObserveRequestSchema, data.request) });
        scheduleReopen();
        break;
      case "stop":
        if (followed.delete(data.id)) scheduleReopen();
        break;
      case "leave":
        dropPort(port);
        break;
      case "alive":
        break;
    }
  };
  port.start();
};

setInterval(() => {
  const now = Date.now();
  for (const [port, seen] of lastSeen) if (now - seen > TAB_TIMEOUT_MS) dropPort(port);
}, 5_000);
