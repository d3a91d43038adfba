// The messages between a tab (live.ts) and the shared worker (live-worker.ts).

export type FromPage =
  | { type: "hello"; serverUrl: string }
  | { type: "follow"; id: string; token: string; request: Uint8Array }
  | { type: "stop"; id: string }
  | { type: "alive" }
  | { type: "leave" };

export type ToPage =
  | { type: "update"; id: string; update: Uint8Array }
  | { type: "ended"; id: string; code?: number; message?: string };
