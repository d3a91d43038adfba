#!/usr/bin/env bash
# Runs Tabula's whole test suite on a fresh machine: installs what the tests need (redis-server,
# which the integration tests start on their own free loopback ports), then checks formatting,
# lints and every test. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
  echo "test.sh: installing redis-server"
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server
  elif command -v brew >/dev/null 2>&1; then
    brew install redis
  else
    echo "test.sh: please install redis-server (Redis >= 7) and rerun" >&2
    exit 1
  fi
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo not found: install Rust from https://rustup.rs and rerun" >&2
  exit 1
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --locked "$@"
