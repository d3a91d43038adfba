#!/usr/bin/env bash
# A `dist` build of `tabula` optimized with a profile of itself (profile-guided optimization):
# build it instrumented, train it on every game played in every way the load generator plays, merge
# the profile, and build again with it. No profile is kept in the repository: one taken from other
# code goes stale with every change, so each build takes its own (about three `dist` builds' time).
#
#   scripts/build-pgo.sh            # prints the path of the binary it built (all else to stderr)
#   BENCH_BINARY=$(scripts/build-pgo.sh) scripts/bench-load.sh --games 64 ...
#
# The training is the deployment benchmark's set-up (scripts/bench-load.sh: Redis with AOF, two
# replicas, `tabula load` as separate processes) with all four games mixed: CreateGame, moves on
# Play streams and by Act with and without views, turns learned by GetView and by Observe streams,
# spectators, and one game alone. The operator's and the auditor's calls (export, replay, admin)
# are not trained: rare, they gain little. A profile trained on one benchmark alone would flatter
# that benchmark.
#
# Needs `llvm-profdata` of an LLVM at least as new as the one rustc was built with, since
# it reads rustc's raw profiles: LLVM_PROFDATA names it; otherwise the rustup component
# `llvm-tools` (the toolchain's own LLVM: added here when rustup is present and it is missing) or
# the newest `llvm-profdata-N` on the PATH is used (Debian: `apt-get install llvm-19` reads the
# profiles of rustc 1.95). Builds go to target/pgo/. The container image (deploy/Dockerfile) ships
# this script's build.
set -euo pipefail
cd "$(dirname "$0")/.."

triple=$(rustc -vV | sed -n 's/^host: //p')
profdata=${LLVM_PROFDATA:-}
if [ -z "$profdata" ]; then
  tools="$(rustc --print sysroot)/lib/rustlib/$triple/bin/llvm-profdata"
  if [ ! -x "$tools" ] && command -v rustup >/dev/null; then
    echo "build-pgo: adding the rustup component llvm-tools (its llvm-profdata)" >&2
    rustup component add llvm-tools >&2 || true
  fi
  if [ -x "$tools" ]; then
    profdata=$tools
  else
    profdata=$(compgen -c llvm-profdata- | sort -t- -k3 -n | tail -1 || true)
  fi
fi
if [ -z "$profdata" ] || ! command -v "$profdata" >/dev/null; then
  echo "build-pgo: no llvm-profdata found (set LLVM_PROFDATA, or install llvm-tools or llvm-19)" >&2
  exit 1
fi

out=$PWD/target/pgo
# Before the long builds: can this llvm-profdata read this rustc's raw profiles? (An older LLVM
# can: Debian's 19 reads rustc 1.95's; a much older one cannot: 14 refuses them.) A program of
# one line, built instrumented, run and merged, finds out in seconds, where the real merge comes
# only after the instrumented build and the training.
probe=$out/probe
rm -rf "$probe"
mkdir -p "$probe"
echo 'fn main() {}' > "$probe/probe.rs"
if ! { rustc -Cprofile-generate="$probe/raw" -o "$probe/probe" "$probe/probe.rs" \
       && "$probe/probe" \
       && "$profdata" merge -o "$probe/probe.profdata" "$probe/raw"; } >&2; then
  echo "build-pgo: $profdata cannot read the profiles of $(rustc -V) (LLVM $(rustc -vV | sed -n "s/^LLVM version: //p")):" \
    "add the rustup component llvm-tools, install a newer llvm-N, or set LLVM_PROFDATA" >&2
  exit 1
fi
rm -rf "$probe"

raw=$out/raw
rm -rf "$raw"
mkdir -p "$raw"
# `--target` keeps the flags off build scripts and proc macros, which run on the build machine:
# only the shipped code is instrumented and optimized.
echo "build-pgo: instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$raw" CARGO_TARGET_DIR=$out/generate \
  cargo build --profile dist --locked --quiet --target "$triple" --bin tabula
instrumented=$out/generate/$triple/dist/tabula

echo "build-pgo: training" >&2
train() { BENCH_BINARY=$instrumented scripts/bench-load.sh --game mix "$@" >&2; }
train --games 64 --duration 15s --pick by-game --turns play
train --games 16 --duration 8s --turns observe --observers 2
train --games 16 --duration 5s
train --games 16 --duration 5s --omit-views
train --games 1 --duration 5s --pick by-game --turns play

"$profdata" merge -o "$out/tabula.profdata" "$raw"
echo "build-pgo: optimized build" >&2
RUSTFLAGS="-Cprofile-use=$out/tabula.profdata" CARGO_TARGET_DIR=$out/use \
  cargo build --profile dist --locked --quiet --target "$triple" --bin tabula
cp "$out/use/$triple/dist/tabula" "$out/tabula"
echo "$out/tabula"
