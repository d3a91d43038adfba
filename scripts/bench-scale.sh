#!/usr/bin/env bash
# Scale-out: Acts/s of one Redis node and of a 3-node Redis Cluster, each with 1, 2, … replicas,
# under the same load (`tabula load` as a separate process, expected versions and request ids,
# AOF everysec on every Redis node). Prints one line per configuration, and the Redis CPU per Act
# summed over the nodes (INFO cpu), so the per-shard ceiling can be read off the curve.
#
#   scripts/bench-scale.sh                                   # 1 and 2 replicas, 64 games, 10 s each
#   BENCH_SCALE_REPLICAS="1 2 4 6" scripts/bench-scale.sh --games 512 --duration 30s
#
# Sized for the machine it runs on: on a small machine every process shares the same cores, so
# the curve flattens where the machine, not Tabula or Redis, is full (docs/scaling.md says where).
# BENCH_BINARY runs that `tabula` binary instead of building this checkout's `dist` profile.
# BENCH_WORKER_THREADS sets every replica's and the load generator's `--worker-threads` (default
# 1, as scripts/bench-load.sh; `auto`: one per CPU each, the binary's default: on a larger machine
# with a few replicas, one thread per CPU lets each replica use its share of the cores).
# Flags after the script's name go to `tabula load` (default: --games 64 --duration 10s
# --pick by-game).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v redis-server >/dev/null || { echo "bench-scale.sh: needs redis-server" >&2; exit 1; }
command -v redis-cli >/dev/null || { echo "bench-scale.sh: needs redis-cli" >&2; exit 1; }
if [ -n "${BENCH_BINARY:-}" ]; then
  TABULA="$BENCH_BINARY"
else
  cargo build --profile dist --locked --quiet --bin tabula
  TABULA="${CARGO_TARGET_DIR:-target}/dist/tabula"
fi
replica_counts="${BENCH_SCALE_REPLICAS:-1 2}"
threads="${BENCH_WORKER_THREADS:-1}"
thread_flags=()
[ "$threads" = auto ] || thread_flags=(--worker-threads "$threads")
load_flags=("$@")
if [ ${#load_flags[@]} -eq 0 ]; then
  load_flags=(--games 64 --duration 10s --pick by-game)
fi

. scripts/bench-common.sh

# A free port whose cluster bus port (the port + 10000) is free and valid too.
free_cluster_port() {
  python3 - <<'PY'
import random, socket
for _ in range(1000):
    port = random.randint(20000, 50000)
    try:
        for candidate in (port, port + 10000):
            s = socket.socket()
            s.bind(("127.0.0.1", candidate))
            s.close()
    except OSError:
        continue
    print(port)
    break
PY
}

# Starts Redis for configuration $1 (node | cluster); sets redis_ports, redis_url, redis_flags.
start_redis() {
  redis_ports=()
  local count=1
  [ "$1" = cluster ] && count=3
  for n in $(seq "$count"); do
    local port dir
    if [ "$1" = cluster ]; then port="$(free_cluster_port)"; else port="$(free_port)"; fi
    # A fresh directory per run: a cluster node must start without the last run's nodes.conf.
    dir="$(mktemp -d "$work/redis-$1-$n.XXXX")"
    local extra=()
    [ "$1" = cluster ] && extra=(--cluster-enabled yes --cluster-config-file "$dir/nodes.conf")
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" \
      --appendonly yes --appendfsync everysec --logfile "$dir/redis.log" "${extra[@]}" &
    pids+=($!)
    redis_ports+=("$port")
  done
  for port in "${redis_ports[@]}"; do wait_redis "$port"; done
  if [ "$1" = cluster ]; then
    local nodes=()
    for port in "${redis_ports[@]}"; do nodes+=("127.0.0.1:$port"); done
    if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$work/cluster-create.log" 2>&1; then
      echo "bench-scale.sh: redis-cli --cluster create failed:" >&2
      cat "$work/cluster-create.log" >&2
      exit 1
    fi
    for _ in $(seq 200); do
      redis-cli -p "${redis_ports[0]}" cluster info | grep -q 'cluster_state:ok' && break
      sleep 0.05
    done
    local urls=()
    for port in "${redis_ports[@]}"; do urls+=("redis://127.0.0.1:$port"); done
    redis_url="$(IFS=,; echo "${urls[*]}")"
    redis_flags=(--redis-cluster)
  else
    redis_url="redis://127.0.0.1:${redis_ports[0]}"
    redis_flags=()
  fi
}

# Redis's CPU seconds so far, summed over the nodes.
redis_cpu() {
  local total=0
  for port in "${redis_ports[@]}"; do
    local cpu
    cpu="$(redis-cli -p "$port" info cpu | awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {print s}')"
    total="$(python3 -c "print($total + $cpu)")"
  done
  echo "$total"
}

echo "bench-scale: redis $(redis-server --version | awk '{print $3}'), AOF everysec; $(nproc) cores; load: ${load_flags[*]}"
printf '%-8s %8s %10s %10s %10s %14s %14s\n' store replicas "Acts/s" "p50 ms" "p99 ms" "replica µs/Act" "Redis µs/Act"
for config in node cluster; do
  for replicas in $replica_counts; do
    start_redis "$config"
    servers=()
    replica_pids=()
    for n in $(seq "$replicas"); do
      port="$(free_port)"
      "$TABULA" serve "${thread_flags[@]}" --listen "127.0.0.1:$port" --redis-url "$redis_url" "${redis_flags[@]}" \
        --create-game-rate 0 --act-rate-per-address 0 --act-rate-per-token 0 \
        --observe-rate-per-address 0 --observe-rate-per-token 0 --max-observe-per-replica 0 \
        --access-log false --log-filter warn >"$work/replica-$config-$replicas-$n.log" 2>&1 &
      pids+=($!)
      replica_pids+=(--replica-pid "$!")
      servers+=(--server "127.0.0.1:$port")
    done
    for ((i = 1; i < ${#servers[@]}; i += 2)); do
      for _ in $(seq 200); do
        "$TABULA" health --server "${servers[$i]}" --timeout 1s >/dev/null 2>&1 && break
        sleep 0.05
      done
    done
    before="$(redis_cpu)"
    "$TABULA" load "${thread_flags[@]}" "${servers[@]}" "${replica_pids[@]}" --json "${load_flags[@]}" >"$work/report.json"
    after="$(redis_cpu)"
    python3 - "$work/report.json" "$config" "$replicas" "$before" "$after" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
config, replicas, before, after = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
acts = report["acts"] or 1
redis_us = (after - before) * 1e6 / acts
replica_us = report.get("replica_cpu_us_per_act") or 0.0
latency = report["act_latency"]
print(f"{config:8s} {replicas:>8s} {report['acts_per_second']:10.0f} "
      f"{latency['p50_us'] / 1000:10.2f} {latency['p99_us'] / 1000:10.2f} "
      f"{replica_us:14.1f} {redis_us:14.1f}")
EOF
    stop_all
  done
done
