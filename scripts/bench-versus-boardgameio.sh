#!/usr/bin/env bash
# Tabula against boardgame.io in the same minutes, in one command: at each game count, round after
# round, `scripts/bench-boardgameio.sh` and then `scripts/bench-load.sh` (and, with
# BENCH_BEFORE_BINARY, another build's replicas and load generator too), so that every ratio
# divides two figures measured a few seconds apart. A ratio against a figure of another day or
# machine says little: the two servers gain unequally from a faster CPU (docs/benchmarks.md).
#
#   scripts/bench-versus-boardgameio.sh
#   scripts/bench-versus-boardgameio.sh --games "1 16 64" --rounds 3 --duration 10s
#   BENCH_BEFORE_BINARY=<the commit before's dist tabula> scripts/bench-versus-boardgameio.sh
#   scripts/bench-versus-boardgameio.sh -- --omit-views
#
# Options: --games "N ..." (default "1 64"), --rounds R (default 2), --duration D (default 10s,
# each run's measured time after its warm-up). Flags after `--` go to `tabula load` after the
# defaults `--pick by-game --turns play` (each seat on its own Play stream, every game's calls on
# one replica). BENCH_BINARY runs that `tabula` binary instead of building this checkout's `dist`
# one; BENCH_BEFORE_BINARY adds a run of that binary to every round, after boardgame.io and before
# this build's. Every other BENCH_* setting of `scripts/bench-load.sh` applies to both builds.
#
# Prints each run's figures as it ends, then one table row per run and per game count and build
# the range of the ratios (Tabula's Acts/s over boardgame.io's moves/s of the same round).
set -euo pipefail
cd "$(dirname "$0")/.."

games_list="1 64"
rounds=2
duration=10s
load_flags=(--pick by-game --turns play)
while [ $# -gt 0 ]; do
  case "$1" in
    --games) games_list="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --) shift; load_flags+=("$@"); break ;;
    *)
      echo "bench-versus-boardgameio.sh: unknown option $1 (see the header of this script)" >&2
      exit 2
      ;;
  esac
done
for games in $games_list; do
  [[ "$games" =~ ^[1-9][0-9]*$ ]] || {
    echo "bench-versus-boardgameio.sh: --games takes whole numbers above 0, not '$games'" >&2
    exit 2
  }
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || {
  echo "bench-versus-boardgameio.sh: --rounds takes a whole number above 0, not '$rounds'" >&2
  exit 2
}

if [ -z "${BENCH_BINARY:-}" ]; then
  # Built once here, so that no run of the load benchmark waits for a build.
  cargo build --profile dist --locked --quiet --bin tabula
  BENCH_BINARY="${CARGO_TARGET_DIR:-target}/dist/tabula"
fi
builds=()
binaries=()
if [ -n "${BENCH_BEFORE_BINARY:-}" ]; then
  builds+=(before)
  binaries+=("$BENCH_BEFORE_BINARY")
fi
builds+=(this)
binaries+=("$BENCH_BINARY")

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rows="$work/rows"
: >"$rows"

# number TEXT PATTERN: the number sed's PATTERN captures in TEXT, without thousands separators,
# or ending the script when it is not there (a run whose output changed shape measures nothing).
number() {
  local value
  value="$(sed -n "s/$2/\1/p" <<<"$1" | head -n 1 | tr -d ,)"
  if [ -z "$value" ]; then
    echo "bench-versus-boardgameio.sh: no figure matching '$2' in this output:" >&2
    echo "$1" >&2
    exit 1
  fi
  echo "$value"
}

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "bench-versus-boardgameio: $(nproc) cores (${cpu:-processor unknown}); games: $games_list; $rounds round(s) of $duration runs; tabula load ${load_flags[*]}"
for games in $games_list; do
  for round in $(seq "$rounds"); do
    bgio_out="$(scripts/bench-boardgameio.sh --games "$games" --duration "$duration" 2>&1)" || {
      echo "$bgio_out" >&2
      exit 1
    }
    moves="$(number "$bgio_out" '.* \([0-9,]*\) moves\/s acknowledged.*')"
    echo "games $games, round $round: boardgame.io $moves moves/s"
    for index in "${!builds[@]}"; do
      build="${builds[$index]}"
      tabula_out="$(BENCH_BINARY="${binaries[$index]}" scripts/bench-load.sh --games "$games" \
        --duration "$duration" "${load_flags[@]}" 2>&1)" || {
        echo "$tabula_out" >&2
        exit 1
      }
      acts="$(number "$tabula_out" '^Acts: [0-9]* acknowledged = \([0-9]*\) Acts\/s.*')"
      replicas="$(number "$tabula_out" '^Replica CPU per Act: \([0-9.]*\) .*')"
      redis="$(number "$tabula_out" '^Redis CPU per Act: \([0-9.]*\) .*')"
      clients="$(number "$tabula_out" '^Load generator CPU per Act: \([0-9.]*\) .*')"
      p99="$(number "$tabula_out" '^Act latency: .* p99 \([0-9]*\) .*')"
      ratio="$(awk -v a="$acts" -v m="$moves" 'BEGIN { printf "%.2f", a / m }')"
      echo "games $games, round $round: tabula ($build) $acts Acts/s, ratio $ratio, p99 $p99 µs, CPU per Act: replicas $replicas / Redis $redis / load generator $clients µs"
      echo "$games $round $moves $build $acts $ratio $p99 $replicas $redis $clients" >>"$rows"
    done
  done
done

echo
echo "| games | round | boardgame.io moves/s | build | Tabula Acts/s | ratio | Act p99 | CPU per Act: replicas / Redis / load generator |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
awk '{ printf "| %s | %s | %s | %s | %s | **%s×** | %s µs | %s / %s / %s µs |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$rows"
echo
awk '
  { key = $1 " " $4; if (!(key in low) || $6 < low[key]) low[key] = $6; if ($6 > high[key]) high[key] = $6
    if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
  END { for (i = 1; i <= n; i++) { split(order[i], part, " ")
    printf "%s game(s), %s: ratio %s–%s×\n", part[1], part[2], low[order[i]], high[order[i]] } }
' "$rows"
