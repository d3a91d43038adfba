#!/usr/bin/env bash
# Tenant isolation under a flood: one Redis (AOF everysec), Tabula replicas as separate processes
# with two declared tenants, and two `tabula load` processes. Tenant "steady" plays at its own
# pace (no quota); tenant "flood" has a quota of FLOOD_QUOTA Acts per second and floods it: every
# refused Act is sent again after a pause chosen so that the flood offers FLOOD_FACTOR (default
# 10) times its quota. The script measures steady's Act latency alone, then the flood alone (how
# far over its quota it offers), then both at once, and prints steady's p99 with the flood against
# its p99 alone.
#
#   scripts/bench-tenants.sh                       # defaults below
#   FLOOD_QUOTA=100 FLOOD_GAMES=64 STEADY_GAMES=16 DURATION_S=10 scripts/bench-tenants.sh
#
# BENCH_BINARY runs that `tabula` binary instead of building this checkout's (`dist` profile).
# BENCH_REPLICAS sets the number of replicas (default 2). Every process runs one worker thread,
# as in scripts/bench-load.sh. Everything listens on free loopback ports and stops on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v redis-server >/dev/null || { echo "bench-tenants.sh: needs redis-server" >&2; exit 1; }
if [ -n "${BENCH_BINARY:-}" ]; then
  TABULA="$BENCH_BINARY"
else
  cargo build --profile dist --locked --quiet --bin tabula
  TABULA="${CARGO_TARGET_DIR:-target}/dist/tabula"
fi
FLOOD_QUOTA="${FLOOD_QUOTA:-100}"
FLOOD_GAMES="${FLOOD_GAMES:-64}"
STEADY_GAMES="${STEADY_GAMES:-16}"
FLOOD_FACTOR="${FLOOD_FACTOR:-10}"
# Each flooding game sends one Act per pause: FLOOD_GAMES / pause = FLOOD_FACTOR × FLOOD_QUOTA.
FLOOD_PAUSE_MS="$((FLOOD_GAMES * 1000 / (FLOOD_FACTOR * FLOOD_QUOTA)))"
STEADY_THINK="${STEADY_THINK:-20ms}"
DURATION_S="${DURATION_S:-10}"

. scripts/bench-common.sh

# Two tenants and their keys, declared in a file (the file holds only the keys' hashes).
key_of() { sed -n 's/^key: //p' "$1"; }
entry_of() { sed -n 's/^file entry: //p' "$1"; }
"$TABULA" tenant-key >"$work/flood.key"
"$TABULA" tenant-key >"$work/steady.key"
cat >"$work/tenants.json" <<EOF
{"tenants": [
  {"id": "flood", "display_name": "Flood", "keys": [$(entry_of "$work/flood.key")],
   "limits": {"acts_per_second": $FLOOD_QUOTA}},
  {"id": "steady", "display_name": "Steady", "keys": [$(entry_of "$work/steady.key")]}
]}
EOF

redis_port="$(free_port)"
start_redis_node redis-server "$redis_port"

servers=()
for _ in $(seq "${BENCH_REPLICAS:-2}"); do
  port="$(free_port)"
  "$TABULA" serve --worker-threads 1 --listen "127.0.0.1:$port" \
    --redis-url "redis://127.0.0.1:$redis_port" --tenants "$work/tenants.json" \
    --anonymous-create false \
    --create-game-rate 0 --act-rate-per-address 0 --act-rate-per-token 0 \
    --observe-rate-per-address 0 --observe-rate-per-token 0 --max-observe-per-replica 0 \
    --access-log false --log-filter warn >"$work/replica-$port.log" 2>&1 &
  pids+=($!)
  servers+=(--server "127.0.0.1:$port")
  for _ in $(seq 200); do
    "$TABULA" health --server "127.0.0.1:$port" --timeout 1s >/dev/null 2>&1 && break
    sleep 0.05
  done
done

steady() {
  "$TABULA" load --worker-threads 1 "${servers[@]}" --pick by-game --key "$(key_of "$work/steady.key")" \
    --games "$STEADY_GAMES" --think "$STEADY_THINK" --warm-up 2s --duration "${DURATION_S}s" --seed 7 --json
}
flood() {
  "$TABULA" load --worker-threads 1 "${servers[@]}" --pick by-game --key "$(key_of "$work/flood.key")" \
    --games "$FLOOD_GAMES" --retry-exhausted "${FLOOD_PAUSE_MS}ms" --duration "$1" --seed 8 --json
}
summary() {
  python3 -c '
import json, sys
report = json.load(open(sys.argv[1]))
refused = report["errors"].get("RESOURCE_EXHAUSTED", 0)
seconds = report["seconds"]
latency = report["act_latency"]
print("%s: %.0f Acts/s accepted, %.0f Acts/s offered (%.0f/s refused over a quota), Act p50 %.2f ms, p99 %.2f ms"
      % (sys.argv[2], report["acts_per_second"], (report["acts"] + refused) / seconds,
         refused / seconds, latency["p50_us"] / 1000, latency["p99_us"] / 1000))
' "$1" "$2"
}

echo "bench-tenants: redis $(redis-server --version | awk '{print $3}'), ${BENCH_REPLICAS:-2} replica(s), $(nproc) cores; flood quota $FLOOD_QUOTA Acts/s, $FLOOD_GAMES flooding games offering ${FLOOD_FACTOR}x (a refused Act again after ${FLOOD_PAUSE_MS} ms); steady: $STEADY_GAMES games, think $STEADY_THINK; ${DURATION_S}s per run"
steady >"$work/steady-alone.json"
summary "$work/steady-alone.json" "steady alone        "
flood "${DURATION_S}s" >"$work/flood-alone.json"
summary "$work/flood-alone.json" "flood alone         "
# The flood starts first and outlasts the steady run.
flood "$((DURATION_S + 3))s" >"$work/flood-both.json" &
flooding=$!
sleep 1
steady >"$work/steady-both.json"
wait "$flooding"
summary "$work/flood-both.json" "flood beside steady "
summary "$work/steady-both.json" "steady beside flood "
python3 -c '
import json, sys
alone = json.load(open(sys.argv[1]))["act_latency"]["p99_us"]
both = json.load(open(sys.argv[2]))["act_latency"]["p99_us"]
print(f"steady Act p99 with the flood / alone: {both / max(alone, 1):.2f}x")
' "$work/steady-alone.json" "$work/steady-both.json"
