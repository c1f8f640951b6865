#!/usr/bin/env bash
# Install what building and testing dsh-allow needs, on a fresh Debian machine
# of this kind (run as root, or with sudo on PATH). Idempotent: every step
# first checks whether its result is already there, so a second run takes
# seconds. See ../shared/docs/toolchain.md for why each piece is needed.
#
# Two wasm32 paths:
#   rustup  - `rustup target list --installed` has wasm32-unknown-unknown
#             (a developer laptop): the normal toolchain builds the core.
#   debian  - otherwise (these machines: rustup cannot download targets):
#             Debian's rustc-web + the std sources, std rebuilt with build-std.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOCK=/tmp/dsh-allow-cargo.lock   # one cargo at a time on a 2-core machine
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

wasm_path=debian
if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  wasm_path=rustup
fi
log "wasm32 toolchain path: $wasm_path"

# --- 1. Debian packages ------------------------------------------------------
# clang/lld are needed on both paths: tree-sitter's C sources must be compiled
# for wasm32, which gcc cannot do. chromium + driver run the browser tests.
# No binaryen: Debian's wasm-opt 108 breaks wasm-bindgen's externref table,
# so scripts/build.sh runs wasm-pack with --no-opt (nothing to download).
# python3-venv and virtualenv: the workflow suite makes environments under
# the fence (tests/workflows.rs; a tool not installed is a loud SKIP);
# openssh-server: tests/approved.rs runs a stand-in git host for `ssh -T`
# (its own sshd on a loopback port; the package's service is not started).
# sqlite3, zip and unzip: the everyday lines of the workflow suite and the
# corpus (tests/everyday/) that remove and replace under the fence.
# musl-tools and libunwind-19-dev, with Debian's Rust and its std source:
# the runner is linked statically against musl on x86_64 (scripts/build.sh
# says why), its std built from source like the wasm32 one.
pkgs=(clang-19 lld-19 llvm-19 chromium chromium-driver python3-venv virtualenv openssh-server sqlite3 zip unzip)
[ "$wasm_path" = debian ] && pkgs+=(rustc-web cargo-web rust-web-src)
[ "$(uname -m)" = x86_64 ] && pkgs+=(musl-tools libunwind-19-dev rustc-web cargo-web rust-web-src)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  as_root apt-get update -qq
  # With recommends, as in the verified recipe (toolchain.md). No service a
  # package ships is started (policy-rc.d 101: openssh-server's sshd).
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null && as_root chmod +x "$policy" && own_policy=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  if [ "$own_policy" = 1 ]; then as_root rm -f "$policy"; fi
else
  log "Debian packages present"
fi

# --- 2. wasm-pack's sysroot check (debian path) --------------------------------
# Without rustup, wasm-pack refuses to build unless the target's libdir
# (`rustc --print target-libdir`) exists; build-std supplies the real std, so
# an empty directory is enough.
if [ "$wasm_path" = debian ]; then
  sysroot_target="$(/usr/bin/rustc --target wasm32-unknown-unknown --print target-libdir)"
  [ -d "$sysroot_target" ] || { log "mkdir $sysroot_target"; as_root mkdir -p "$sysroot_target"; }
fi

# --- 3. wasm-pack and wasm-bindgen-cli from crates.io --------------------------
# Installs use rustup's cargo (the default one): they are native tools.
if ! command -v wasm-pack >/dev/null; then
  log "cargo install wasm-pack"
  flock "$LOCK" cargo install wasm-pack --locked
else
  log "wasm-pack present: $(wasm-pack --version)"
fi

# wasm-bindgen-cli must be exactly the wasm-bindgen in Cargo.lock, or the
# generated glue and the compiled module disagree. Resolve the lock if absent.
if [ ! -f "$ROOT/Cargo.lock" ]; then
  log "resolving Cargo.lock"
  (cd "$ROOT" && flock "$LOCK" cargo generate-lockfile)
fi
bindgen_version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock")"
[ -n "$bindgen_version" ] || { log "no wasm-bindgen in Cargo.lock"; exit 1; }
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $bindgen_version" ]; then
  # No --locked: for 0.2.130 the locked webpki-roots is gone from crates.io.
  log "cargo install wasm-bindgen-cli $bindgen_version"
  flock "$LOCK" cargo install wasm-bindgen-cli --version "$bindgen_version" --force
else
  log "wasm-bindgen-cli $bindgen_version present"
fi

# --- 4. Node for the package tests --------------------------------------------
# The package targets Node >= 20; the machine image ships Node 20 and npm.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "node and npm (>= 20) are required on PATH"; exit 1
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || { log "node >= 20 required, found $(node --version)"; exit 1; }

# --- 5. Package managers the workflow suite runs under the fence -------------
# pnpm from the npm registry and uv from PyPI (a wheel holding its binary):
# small, and each only when missing; a failure leaves the suite to SKIP it.
if ! command -v pnpm >/dev/null; then
  log "npm install -g pnpm"
  npm install -g --no-audit --no-fund --loglevel=error pnpm || log "pnpm could not be installed; its workflow will SKIP"
fi
if ! command -v uv >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
  log "pip install uv"
  python3 -m pip install -q uv 2>/dev/null || log "uv could not be installed; its workflow will SKIP"
fi

# --- 6. The everyday tools the fence must not break --------------------------
# One folder every test finds (DSH_ALLOW_TOOLS overrides it): a venv with
# pytest, ruff, black, django and flask from PyPI, and vite from the npm
# registry (black for its cache under ~/.cache).
# Under /usr/local: the baseline lets a fenced call read and run /usr, and
# the unprivileged user (uid 65534) reaches it too, which a folder in root's
# home would not allow. Each part is made only when its check fails.
tools="${DSH_ALLOW_TOOLS:-/usr/local/lib/dsh-allow-tools}"
if [ ! -x "$tools/venv/bin/python" ] || ! "$tools/venv/bin/python" -c 'import pytest, django, flask, black' 2>/dev/null || [ ! -x "$tools/venv/bin/ruff" ]; then
  log "python venv with pytest, ruff, black, django, flask in $tools/venv"
  as_root mkdir -p "$tools"
  as_root /usr/bin/python3 -m venv "$tools/venv" \
    && as_root "$tools/venv/bin/python" -m pip install -q --disable-pip-version-check pytest ruff black django flask \
    || log "the tools venv could not be made; the workflows that need it will SKIP"
else
  log "tools venv present ($tools/venv)"
fi
if [ ! -x "$tools/node/node_modules/.bin/vite" ]; then
  log "npm install vite in $tools/node"
  as_root mkdir -p "$tools/node"
  [ -f "$tools/node/package.json" ] || printf '{"name": "dsh-allow-tools", "private": true}\n' | as_root tee "$tools/node/package.json" >/dev/null
  # vite 6: it runs on every Node 20 (vite 7 wants 20.19 or later).
  (cd "$tools/node" && as_root npm install --no-audit --no-fund --loglevel=error vite@6) \
    || log "vite could not be installed; the workflows that need it will SKIP"
else
  log "vite present ($tools/node)"
fi
as_root chmod -R a+rX "$tools" 2>/dev/null || true

log "done"
