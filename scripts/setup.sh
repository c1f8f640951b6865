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
pkgs=(clang-19 lld-19 llvm-19 chromium chromium-driver python3-venv virtualenv openssh-server)
[ "$wasm_path" = debian ] && pkgs+=(rustc-web cargo-web rust-web-src)
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

log "done"
