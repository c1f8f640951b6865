#!/usr/bin/env bash
# Build everything the npm package holds and assemble it in pkg/ (git-ignored):
#   - the native CLI (release), shipped as pkg/bin/<os>-<arch>/dsh-allow;
#   - the core for wasm32, compiled once by cargo and wrapped twice by
#     wasm-bindgen (via wasm-pack): --target nodejs and --target web;
#   - pkg-template/ (package.json, thin JS wrappers, .d.ts, cordis.patch.yml),
#     plugin/ and the browser client bundle.
# Run scripts/setup.sh first. Every cargo/wasm-pack call holds a lock: the
# machine has 2 cores and concurrent builds only thrash.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOCK=/tmp/dsh-allow-cargo.lock
export PATH="$HOME/.cargo/bin:$PATH"
cd "$ROOT"

log() { printf 'build: %s\n' "$*" >&2; }

# --- 1. native CLI -------------------------------------------------------------
# On Linux the binary is linked statically: the runner is exec'd in front of
# every confined command, and a static binary skips the dynamic loader
# (measured: about 0.6 ms less start-up on this machine). It is not
# position-independent either: a static PIE relocates itself at start-up
# (~3,300 relocations, a dozen copied pages). The runner execs at once, and
# the program it starts gets its own address-space randomisation. An
# explicit --target keeps the flags off build scripts and proc-macros.
# Linked by lld with the functions a fenced call runs side by side
# (scripts/runner-hot-functions.txt): each process of a call faults the text
# in again after its fork, 16 pages a fault (~60 faults a call spread, 7
# windows side by side; docs/performance.md).
#
# On x86_64 it is linked against musl where the pieces are here (Debian's
# Rust with its std source, musl-tools, LLVM's libunwind; scripts/setup.sh
# installs them): glibc's static start-up reads the CPU's features with
# ~30 `cpuid` instructions, each a trap to the hypervisor in a VM, 0.2-0.3 ms
# of every call here (a static `int main(){}`: 0.31 ms of CPU with glibc,
# 0.06 ms with musl). Otherwise glibc, statically, as before.
host_triple="$(rustc -vV | sed -n 's/^host: //p')"
hot_link=()
if command -v clang-19 >/dev/null && [ -x /usr/lib/llvm-19/bin/ld.lld ]; then
  hot_link=(-C "link-arg=-Wl,--symbol-ordering-file=$ROOT/scripts/runner-hot-functions.txt" -C link-arg=-Wl,--no-warn-symbol-ordering)
fi
musl_ready() {
  [ "$host_triple" = x86_64-unknown-linux-gnu ] && [ "${DSH_ALLOW_RUNNER_LIBC:-}" != glibc ] \
    && command -v musl-gcc >/dev/null && [ -f /usr/lib/llvm-19/lib/libunwind.a ] \
    && [ -x /usr/bin/rustc ] && [ -d /usr/lib/rustlib/src/rust/library/std ] && [ "${#hot_link[@]}" -gt 0 ]
}
case "$host_triple" in
  x86_64-unknown-linux-gnu | *-linux-gnu)
    # One argument each, passed as cargo's encoded list (0x1f between): the
    # order file's path may hold a space, which RUSTFLAGS would split.
    read -ra flags <<<"${RUSTFLAGS:-}"
    flags+=(-C target-feature=+crt-static -C relocation-model=static)
    if musl_ready; then
      # Debian's rustc builds musl's std from source (build-std, as for
      # wasm32), in a target dir of its own so neither build evicts the
      # other. musl-gcc links (its libc, not a self-contained copy; no program
      # interpreter, which its specs would name for lld even when static), with
      # lld for the ordering, and LLVM's libunwind for std's unwinder.
      flags+=(-C link-self-contained=no -C link-arg=-fuse-ld=lld -C link-arg=-B/usr/lib/llvm-19/bin -C link-arg=-L/usr/lib/llvm-19/lib -C link-arg=-Wl,--no-dynamic-linker "${hot_link[@]}")
      log "cargo build --release --bin dsh-allow --target x86_64-unknown-linux-musl (static, musl, hot functions side by side)"
      CARGO_ENCODED_RUSTFLAGS="$(IFS=$'\x1f'; echo "${flags[*]}")" \
        PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO=/usr/bin/cargo RUSTC_BOOTSTRAP=1 \
        CC_x86_64_unknown_linux_musl=musl-gcc CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_LINKER=musl-gcc \
        CARGO_TARGET_DIR="$ROOT/target/musl" \
        flock "$LOCK" /usr/bin/cargo build --release --bin dsh-allow --target x86_64-unknown-linux-musl -Zbuild-std=std,panic_abort
      native_bin="$ROOT/target/musl/x86_64-unknown-linux-musl/release/dsh-allow"
    else
      how="static, glibc"
      if [ "${#hot_link[@]}" -gt 0 ]; then
        flags+=(-C linker=clang-19 -C link-arg=-fuse-ld=lld "${hot_link[@]}")
        how="$how, hot functions side by side"
      else
        log "no clang-19 and lld-19 here (scripts/setup.sh installs them): the runner is linked without its hot functions side by side"
      fi
      log "cargo build --release --bin dsh-allow --target $host_triple ($how)"
      CARGO_ENCODED_RUSTFLAGS="$(IFS=$'\x1f'; echo "${flags[*]}")" \
        flock "$LOCK" cargo build --release --bin dsh-allow --target "$host_triple"
      native_bin="${CARGO_TARGET_DIR:-$ROOT/target}/$host_triple/release/dsh-allow"
    fi
    ;;
  *)
    log "cargo build --release --bin dsh-allow"
    flock "$LOCK" cargo build --release --bin dsh-allow
    native_bin="${CARGO_TARGET_DIR:-$ROOT/target}/release/dsh-allow"
    ;;
esac

# --- 2. wasm core --------------------------------------------------------------
out="$ROOT/target/wasm-pack"
stamp="$out/.built"
# wasm-bindgen and wasm-opt rerun on every wasm-pack call even when cargo has
# nothing to do; skip both when no input changed since the last good build.
if [ -f "$stamp" ] && [ -z "$(find src build.rs Cargo.toml Cargo.lock scripts/wasm-env.sh scripts/wasm-shim.h -newer "$stamp" 2>/dev/null | head -n 1)" ]; then
  log "wasm core up to date ($out)"
else
  (
    # shellcheck source=scripts/wasm-env.sh
    source "$ROOT/scripts/wasm-env.sh"
    log "wasm toolchain: $WASM_TOOLCHAIN"
    for target in nodejs web; do
      log "wasm-pack build --target $target"
      # --no-pack: the package.json is ours; extra cargo flags follow the path.
      # --no-opt: Debian's wasm-opt (binaryen 108) rewrites the externref
      # table wasm-bindgen uses into a funcref one, and the module then fails
      # at load ("WebAssembly.Table.set(): Argument 1 is invalid for table");
      # rustc's opt-level 3 + LTO already did the heavy lifting.
      # shellcheck disable=SC2086
      flock "$LOCK" wasm-pack --log-level warn build --no-pack --no-opt --release --target "$target" \
        --out-dir "$out/$target" --out-name dsh_allow "$ROOT" $WASM_CARGO_ARGS
    done
  )
  touch "$stamp"
fi

# --- 3. assemble pkg/ ----------------------------------------------------------
log "assembling pkg/"
rm -rf pkg
mkdir -p pkg
cp -R pkg-template/. pkg/

# The wasm-bindgen outputs, without wasm-pack's .gitignore/README. The nodejs
# glue is CommonJS; its folder gets a package.json saying so, since the
# package itself is "type": "module".
for target in nodejs web; do
  dest="pkg/core/wasm/$target"
  mkdir -p "$dest"
  cp "$out/$target"/dsh_allow.js "$out/$target"/dsh_allow.d.ts "$out/$target"/dsh_allow_bg.wasm "$dest/"
  [ -f "$out/$target/dsh_allow_bg.wasm.d.ts" ] && cp "$out/$target/dsh_allow_bg.wasm.d.ts" "$dest/"
done
printf '{ "type": "commonjs" }\n' > pkg/core/wasm/nodejs/package.json
# The nodejs glue keeps the .wasm file's bytes in a module constant for the
# life of the process (2.5 MB, beside V8's own copy): let them go once the
# module is compiled. Every MiB the host process holds is copied by each
# fork it makes to run a tool call (docs/performance.md).
node -e '
  const fs = require("fs");
  const file = process.argv[1];
  const text = fs.readFileSync(file, "utf8");
  const from = "const wasmBytes = require(\x27fs\x27).readFileSync(wasmPath);\nconst wasmModule = new WebAssembly.Module(wasmBytes);";
  if (!text.includes(from)) {
    console.error("build: the nodejs glue changed; cannot let go of its copy of the wasm bytes");
    process.exit(1);
  }
  fs.writeFileSync(file, text.replace(from, "const wasmModule = new WebAssembly.Module(require(\x27fs\x27).readFileSync(wasmPath));"));
' pkg/core/wasm/nodejs/dsh_allow.js

# The DSH plugin (may still be empty while it is being written).
mkdir -p pkg/plugin
cp -R plugin/. pkg/plugin/
[ -f pkg/plugin/index.js ] || log "WARNING: plugin/index.js does not exist yet; the package's \".\" export is dangling"

# The browser bundle DSH serves: the first that exists of these.
client=""
for c in client/client.js plugin/client.js plugin/client/client.js; do
  if [ -f "$c" ]; then client="$c"; break; fi
done
if [ -n "$client" ]; then
  mkdir -p pkg/client
  cp "$client" pkg/client/client.js
else
  log "WARNING: no client bundle found; dropping the ./client export and dsh.client"
fi

# The native runner for this platform (Linux x64 is what CI builds).
case "$(uname -sm)" in
  "Linux x86_64") platform=linux-x64 ;;
  "Darwin arm64") platform=darwin-arm64 ;;
  "Darwin x86_64") platform=darwin-x64 ;;
  *) platform="" ;;
esac
if [ -n "$platform" ]; then
  mkdir -p "pkg/bin/$platform"
  cp "$native_bin" "pkg/bin/$platform/dsh-allow"
  chmod 755 "pkg/bin/$platform/dsh-allow"
fi

# package.json: version from Cargo.toml, client entries only if shipped.
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
DSH_VERSION="$version" DSH_HAS_CLIENT="${client:+1}" node -e '
  const fs = require("fs");
  const p = JSON.parse(fs.readFileSync("pkg/package.json", "utf8"));
  p.version = process.env.DSH_VERSION;
  if (!process.env.DSH_HAS_CLIENT) { delete p.exports["./client"]; delete p.dsh.client; }
  fs.writeFileSync("pkg/package.json", JSON.stringify(p, null, 2) + "\n");
'
log "pkg/ ready: dsh-allow@$version ($(du -sh pkg | cut -f1))"
