#!/usr/bin/env bash
# The deployment benchmark: Redis with AOF (appendfsync everysec), two Tabula replicas as separate
# processes, and `tabula load` as a third process playing like real clients (expected versions,
# request ids, calls spread over both replicas). In the same run it samples the raw append round
# trip and a gRPC echo (health check), and the replicas' CPU time per Act from the kernel's
# accounting of their processes.
#
#   scripts/bench-load.sh [tabula load flags...]
#   scripts/bench-load.sh --games 64 --duration 20s
#   scripts/bench-load.sh --games 1000 --observers 10 --duration 20s
#   BENCH_REPLICAS=1 scripts/bench-load.sh --games 1000 --observers 10 --think 2s --warm-up 10s --duration 40s
#
# BENCH_REPLICAS sets the number of replicas (default 2). BENCH_WORKER_THREADS sets each replica's
# and the load generator's `--worker-threads` (default 1: four processes share this machine's cores,
# and one thread per process is the cheapest per call; `auto`: one per CPU each, the binary's
# default). BENCH_BINARY runs that `tabula` binary instead of building this checkout's
# (before/after comparisons: alternate the two binaries' runs). BENCH_LOAD_BINARY runs the load
# generator from another binary than the replicas (the same clients against two builds of the
# replicas). BENCH_STORE_LAYOUT marks the new Redis with that
# store layout first (1: as a deployment upgraded from 1.0.0; default: what the replicas choose).
# BENCH_REDIS_SERVER runs another server binary than `redis-server` (e.g. a `valkey-server`).
# BENCH_TENANT=1 declares one tenant on the replicas and plays its games (`tabula load --key`):
# every move is then told to the tenant's turn inbox and event stream (no webhook), as in a
# deployment shared by several backends.
#
# Everything it starts listens on free loopback ports and is stopped when it exits; the Redis it
# starts keeps its files in a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

REDIS_SERVER="${BENCH_REDIS_SERVER:-redis-server}"
command -v "$REDIS_SERVER" >/dev/null || { echo "bench-load.sh: needs $REDIS_SERVER" >&2; exit 1; }
if [ -n "${BENCH_BINARY:-}" ]; then
  # A prebuilt binary (another commit's, for a side-by-side comparison in the same minutes).
  TABULA="$BENCH_BINARY"
else
  # The `dist` profile (fat LTO, one codegen unit): what the container image ships, before the
  # image adds its profile-guided step (scripts/build-pgo.sh; BENCH_BINARY=<its build> measures that).
  cargo build --profile dist --locked --quiet --bin tabula
  TABULA="${CARGO_TARGET_DIR:-target}/dist/tabula"
fi

. scripts/bench-common.sh

redis_port="$(free_port)"
start_redis_node "$REDIS_SERVER" "$redis_port"
redis_url="redis://127.0.0.1:$redis_port"
if [ -n "${BENCH_STORE_LAYOUT:-}" ]; then
  redis-cli -p "$redis_port" set tabula:layout "$BENCH_STORE_LAYOUT" >/dev/null
fi
LOAD="${BENCH_LOAD_BINARY:-$TABULA}"
tenant_flags=()
load_flags=()
if [ -n "${BENCH_TENANT:-}" ]; then
  "$TABULA" tenant-key >"$work/tenant.key"
  cat >"$work/tenants.json" <<JSON
{"tenants": [{"id": "bench", "display_name": "Bench",
              "keys": [$(sed -n 's/^file entry: //p' "$work/tenant.key")]}]}
JSON
  tenant_flags=(--tenants "$work/tenants.json")
  load_flags=(--key "$(sed -n 's/^key: //p' "$work/tenant.key")")
fi

# The load comes from one address, so the per-address and per-token rate limits (which guard
# against one abusive client) are lifted; the stream limit per connection stays as deployed.
threads="${BENCH_WORKER_THREADS:-1}"
thread_flags=()
[ "$threads" = auto ] || thread_flags=(--worker-threads "$threads")
servers=()
replica_pids=()
replicas="${BENCH_REPLICAS:-2}"
for _ in $(seq "$replicas"); do
  port="$(free_port)"
  "$TABULA" serve "${thread_flags[@]}" "${tenant_flags[@]}" --listen "127.0.0.1:$port" --redis-url "$redis_url" \
    --create-game-rate 0 --act-rate-per-address 0 --act-rate-per-token 0 \
    --observe-rate-per-address 0 --observe-rate-per-token 0 --max-observe-per-replica 0 \
    --access-log false --log-filter warn >"$work/replica-$port.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  replica_pids+=(--replica-pid "$pid")
  servers+=(--server "127.0.0.1:$port")
done
for server in "${servers[@]}"; do
  [ "$server" = "--server" ] && continue
  for _ in $(seq 200); do
    "$TABULA" health --server "$server" --timeout 1s >/dev/null 2>&1 && break
    sleep 0.05
  done
done

echo "bench-load: $(basename "$REDIS_SERVER") $("$REDIS_SERVER" --version | awk '{print $3}') with appendonly yes, appendfsync everysec; $replicas replica(s); $(nproc) cores; worker threads per process: $threads; store layout $(redis-cli -p "$redis_port" get tabula:layout)"
"$LOAD" load "${thread_flags[@]}" "${servers[@]}" "${replica_pids[@]}" --probe-redis "$redis_url" "${load_flags[@]}" "$@"
echo "Redis: $(redis-cli -p "$redis_port" info clients | grep connected_clients | tr -d '\r'), $(redis-cli -p "$redis_port" info memory | grep '^used_memory_human' | tr -d '\r')"
