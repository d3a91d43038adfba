#!/usr/bin/env bash
# The boardgame.io baseline, to run beside scripts/bench-load.sh in the same minutes: boardgame.io
# 0.50.2's server (in-memory storage, lobby API and socket.io on one port) in one node process, and
# benches/boardgameio/bench.js in another, playing N matches at once through boardgame.io Clients
# with the socket.io transport (two per match, credentials from the lobby API), flat out.
#
#   scripts/bench-boardgameio.sh --games 64 --duration 10s
#   scripts/bench-boardgameio.sh --games 1 --duration 10s --warm-up 2s --moves-per-match 100
#
# It prints one line: moves/s acknowledged, p50/p99 move latency, and the CPU seconds per 1,000
# moves of the server process and of the client process. Installs the pinned packages with
# `npm ci` into benches/boardgameio/node_modules first (once; BENCH_NPM_CI=1 forces it). Both
# processes run with NODE_ENV=production, as a deployment would. Everything listens on a free
# loopback port and is stopped when the script exits.
set -euo pipefail
SCRIPTS="$(cd "$(dirname "$0")" && pwd)"
cd "$SCRIPTS/../benches/boardgameio"

command -v node >/dev/null || { echo "bench-boardgameio.sh: needs node" >&2; exit 1; }
if [ "${BENCH_NPM_CI:-0}" = 1 ] || [ ! -d node_modules/boardgame.io ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

. "$SCRIPTS/bench-common.sh"

export NODE_ENV=production
node server.js --port 0 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
pids+=("$server_pid")
port=""
for _ in $(seq 200); do
  port="$(sed -n 's/^port \([0-9]*\)$/\1/p' "$work/server.out")"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.05
done
if [ -z "$port" ]; then
  echo "bench-boardgameio.sh: the server did not start" >&2
  cat "$work/server.err" >&2
  exit 1
fi

status=0
node bench.js --server "http://127.0.0.1:$port" --server-pid "$server_pid" \
  --clock-ticks "$(getconf CLK_TCK)" "$@" &
pids+=($!)
wait $! || status=$?
if [ -s "$work/server.err" ]; then
  echo "server stderr (last lines):" >&2
  tail -n 5 "$work/server.err" >&2
fi
exit "$status"
