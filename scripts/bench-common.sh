# Shared by the benchmark scripts, which source it (it is not run on its own): a scratch
# directory, the processes to stop when the script exits, a free loopback port, and a Redis that
# persists as deployed.
#
# After sourcing: `$work` is the scratch directory, and every process a script starts in the
# background goes into `pids`, so that it is stopped however the script ends.

work="$(mktemp -d)"
pids=()

# Stops every process in `pids` and waits for each.
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT

# A loopback port nothing listens on now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_redis PORT: waits up to 10 s for the Redis on PORT to answer, else ends the script.
wait_redis() {
  for _ in $(seq 200); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$(basename "$0"): the Redis on port $1 did not start" >&2
  exit 1
}

# start_redis_node SERVER PORT [ARGS...]: SERVER (redis-server or valkey-server) on PORT with its
# files in `$work`, persisting as deployed (AOF, fsync every second), in the background; returns
# once it answers.
start_redis_node() {
  local server="$1" port="$2"
  shift 2
  "$server" --port "$port" --bind 127.0.0.1 --dir "$work" --save "" \
    --appendonly yes --appendfsync everysec --logfile "$work/redis-$port.log" "$@" &
  pids+=($!)
  wait_redis "$port"
}
