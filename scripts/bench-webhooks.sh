#!/usr/bin/env bash
# Webhooks under load: one Redis (AOF everysec), Tabula replicas as separate processes with one
# declared tenant, a webhook receiver (a separate Python process), and `tabula load` playing
# GAMES games at once (each seat thinks THINK before it moves). Three runs of the same load: games
# of no tenant (no notifications: the reference), the tenant's games without a webhook (their
# notifications still feed its turn inbox and event stream), and with a webhook registered for
# every event kind. The receiver takes each
# notification's `logged_at_ms` (when the move was logged) from its arrival time: move → webhook
# received. Prints Acts/s, replica and Redis CPU per Act for both runs, and the latency's
# p50/p99.
#
#   scripts/bench-webhooks.sh                     # defaults below
#   GAMES=1000 THINK=1s DURATION_S=30 scripts/bench-webhooks.sh
#
# BENCH_BINARY runs that `tabula` binary instead of building this checkout's (`dist` profile).
# Every process runs one worker thread, as in scripts/bench-load.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v redis-server >/dev/null || { echo "bench-webhooks.sh: needs redis-server" >&2; exit 1; }
if [ -n "${BENCH_BINARY:-}" ]; then
  TABULA="$BENCH_BINARY"
else
  cargo build --profile dist --locked --quiet --bin tabula
  TABULA="${CARGO_TARGET_DIR:-target}/dist/tabula"
fi
GAMES="${GAMES:-1000}"
THINK="${THINK:-1s}"
DURATION_S="${DURATION_S:-30}"

. scripts/bench-common.sh

"$TABULA" tenant-key >"$work/tenant.key"
key="$(sed -n 's/^key: //p' "$work/tenant.key")"
cat >"$work/tenants.json" <<JSON
{"tenants": [{"id": "bench", "display_name": "Bench",
              "keys": [$(sed -n 's/^file entry: //p' "$work/tenant.key")]}]}
JSON

redis_port="$(free_port)"
start_redis_node redis-server "$redis_port"

# The receiver: answers 200 at once and keeps, per notification, arrival − logged_at_ms.
receiver_port="$(free_port)"
cat >"$work/receiver.py" <<'PY'
import http.server, json, signal, sys, time
latencies = []
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        now_ms = time.time() * 1000
        logged = json.loads(body)["logged_at_ms"]
        latencies.append((logged, now_ms - logged))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
def report(*_):
    with open(sys.argv[2], "w") as out:
        json.dump(latencies, out)
    sys.exit(0)
signal.signal(signal.SIGTERM, report)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY
python3 "$work/receiver.py" "$receiver_port" "$work/latencies.json" &
receiver=$!
pids+=($receiver)

servers=()
replica_pids=()
for _ in $(seq "${BENCH_REPLICAS:-2}"); do
  port="$(free_port)"
  "$TABULA" serve --worker-threads 1 --listen "127.0.0.1:$port" \
    --redis-url "redis://127.0.0.1:$redis_port" --tenants "$work/tenants.json" \
    --webhook-allow-private \
    --create-game-rate 0 --act-rate-per-address 0 --act-rate-per-token 0 \
    --observe-rate-per-address 0 --observe-rate-per-token 0 --max-observe-per-replica 0 \
    --access-log false --log-filter warn >"$work/replica-$port.log" 2>&1 &
  pids+=($!)
  replica_pids+=(--replica-pid "$!")
  servers+=(--server "127.0.0.1:$port")
  for _ in $(seq 200); do
    "$TABULA" health --server "127.0.0.1:$port" --timeout 1s >/dev/null 2>&1 && break
    sleep 0.05
  done
done

load() {
  "$TABULA" load --worker-threads 1 "${servers[@]}" "${replica_pids[@]}" --pick by-game \
    --games "$GAMES" --think "$THINK" --warm-up 3s --duration "${DURATION_S}s" \
    --probe-redis "redis://127.0.0.1:$redis_port" --seed 11 --json "$@"
}
summary() {
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("%s: %.0f Acts/s, Act p99 %.2f ms, replica CPU %.0f µs/Act, Redis CPU %.0f µs/Act"
      % (sys.argv[2], r["acts_per_second"], r["act_latency"]["p99_us"] / 1000,
         r["replica_cpu_us_per_act"] or 0, r["redis_cpu_us_per_act"] or 0))
' "$1" "$2"
}

echo "bench-webhooks: redis $(redis-server --version | awk '{print $3}'), ${BENCH_REPLICAS:-2} replica(s), $(nproc) cores; $GAMES games, think $THINK, ${DURATION_S}s per run"
# Games of no tenant: no notifications at all (the reference).
load >"$work/anonymous.json"
summary "$work/anonymous.json" "no tenant (reference)      "
# The tenant's games: their notifications feed its turn inbox and event stream.
load --key "$key" >"$work/off.json"
summary "$work/off.json" "tenant, no webhook         "
load --key "$key" --webhook "http://127.0.0.1:$receiver_port/hook" >"$work/on.json"
summary "$work/on.json" "tenant, webhook (all kinds)"
# Let the last notifications arrive, then read the receiver's figures.
sleep 3
kill -TERM "$receiver"
wait "$receiver" 2>/dev/null || true
python3 -c '
import json, sys
pairs = json.load(open(sys.argv[1]))
if not pairs:
    sys.exit("no notification arrived")
def show(label, values):
    if not values:
        # A run shorter than the window (e.g. DURATION_S=3) has nothing to show in it.
        print(f"move -> webhook received, {label}: no notifications")
        return
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    print(f"move -> webhook received, {label}: {len(values)} notifications, p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {values[-1]:.1f} ms")
show("whole run", [latency for _, latency in pairs])
# Past the first 5 s: the 1,000 creations at the start (a burst of first turns) left out.
start = min(logged for logged, _ in pairs)
show("after the first 5 s", [latency for logged, latency in pairs if logged >= start + 5000])
' "$work/latencies.json"
