#!/usr/bin/env bash
# Builds the `tabula` binary of the previous release (the commit named in PREVIOUS_RELEASE) and
# prints its path, for the rolling-upgrade test (tests/rolling_upgrade.rs, which reads it from
# TABULA_PREVIOUS_BINARY):
#
#   TABULA_PREVIOUS_BINARY="$(scripts/previous-release.sh)" cargo test --test integration rolling_upgrade::
#
# The commit's tree is exported (git archive) into <target>/previous-release/<commit>/src and built
# there in debug with a target directory of its own, <target>/previous-release/<commit>/target,
# seeded with hard links to the current build's compiled dependencies (every crate but tabula
# itself), so that only the crates whose inputs differ are compiled. The binary is copied to
# <target>/previous-release/<commit>/tabula; a rerun for the same commit finds it and prints it at
# once. <target> is $CARGO_TARGET_DIR, or target/. Build output goes to stderr; stdout is the path.
set -euo pipefail
cd "$(dirname "$0")/.."

commit="$(grep -v '^[[:space:]]*#' PREVIOUS_RELEASE | awk 'NF { print $1; exit }')"
if ! [[ "$commit" =~ ^[0-9a-f]{40}$ ]]; then
  echo "previous-release.sh: PREVIOUS_RELEASE must name a full 40-digit commit id, not '$commit'" >&2
  exit 1
fi

target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
home="$target/previous-release/$commit"
binary="$home/tabula"
mkdir -p "$home"
# One build at a time per commit (two test processes may ask at once); the second reuses it.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$home.lock"
  flock 9
fi
if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

# A shallow or single-branch clone (as CI may make) may lack the commit: fetch just it.
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  remote="$(git remote | head -n 1)"
  echo "previous-release.sh: commit $commit is not in this clone; fetching it from '${remote:-<no remote>}'" >&2
  if [ -z "$remote" ] || ! git fetch --quiet --no-tags --depth=1 "$remote" "$commit" >&2 \
    || ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "previous-release.sh: cannot get commit $commit (PREVIOUS_RELEASE): fetch it (e.g. \`git fetch --unshallow\`, or \`git fetch origin $commit\`) and rerun" >&2
    exit 1
  fi
fi

started=$SECONDS
rm -rf "$home/src"
mkdir -p "$home/src" "$home/target/debug"
git archive --format=tar "$commit" | tar -x -C "$home/src"

# Seed the old build's target directory with the current build's compiled dependencies: hard
# links, so no copying. tabula's own artifacts are left out: the old tabula is compiled afresh,
# and nothing the old build writes can reach the current build's files through a shared link
# (cargo and rustc rewrite fingerprints and dep-info files in place; an unchanged dependency is
# never rewritten). The fingerprints are small and copied outright.
current="$target/debug"
if [ -d "$current/deps" ]; then
  for dir in deps build .fingerprint; do
    [ -d "$current/$dir" ] || continue
    mkdir -p "$home/target/debug/$dir"
    link="-l"
    [ "$dir" = .fingerprint ] && link=""
    find "$current/$dir" -mindepth 1 -maxdepth 1 \
      ! -name 'tabula-*' ! -name 'libtabula-*' ! -name '.cargo-lock' \
      -exec cp -a $link -n -t "$home/target/debug/$dir" {} +
  done
fi

echo "previous-release.sh: building tabula at $commit (debug) in $home/src" >&2
(cd "$home/src" && cargo build --locked --bin tabula --target-dir "$home/target" >&2)
cp "$home/target/debug/tabula" "$binary.partial"
mv "$binary.partial" "$binary"
echo "previous-release.sh: built in $((SECONDS - started)) s: $binary" >&2
echo "$binary"
