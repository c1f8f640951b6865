# Source me (bash): the environment for building the core for wasm32.
#   ( source scripts/wasm-env.sh && wasm-pack build ... $WASM_CARGO_ARGS )
# Source it in a subshell: it puts Debian's cargo first on PATH and moves the
# target dir, which native builds must not inherit.
#
# Exports WASM_TOOLCHAIN (rustup|debian) and WASM_CARGO_ARGS (extra cargo
# flags to append after the crate path of wasm-pack / cargo).
# Why each variable: ../shared/docs/toolchain.md §3-§4.

_dsh_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  export WASM_TOOLCHAIN=rustup
  export WASM_CARGO_ARGS=""
else
  export WASM_TOOLCHAIN=debian
  # Debian's rustc builds wasm32 std from source; an rlib from one rustc
  # cannot be used by the other, so no rustup tool may be picked up.
  export PATH="/usr/bin:$PATH"
  export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO=/usr/bin/cargo
  export RUSTC_BOOTSTRAP=1            # lets a stable rustc/cargo take -Z flags
  export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld-19   # no rust-lld in Debian
  export WASM_CARGO_ARGS="-Zbuild-std=std,panic_abort"
fi

# A target dir of its own: the other rustc (and other RUSTFLAGS) would
# otherwise invalidate the native build cache in target/ on every switch.
export CARGO_TARGET_DIR="$_dsh_root/target/wasm"

# tree-sitter's C code for wasm32: clang (gcc has no wasm32 backend), the
# small libc headers the tree-sitter-language crate ships (tree-sitter-bash's
# build script does not add them), and a shim for isdigit, which scanner.c
# uses but those headers do not declare.
export CC_wasm32_unknown_unknown=clang-19
export AR_wasm32_unknown_unknown=llvm-ar-19
# (flock: one cargo at a time on this 2-core machine; do not source this file
# while holding /tmp/dsh-allow-cargo.lock yourself.)
_dsh_tsl_manifest="$(cd "$_dsh_root" && flock /tmp/dsh-allow-cargo.lock cargo metadata --format-version 1 2>/dev/null \
  | grep -o '"manifest_path":"[^"]*/tree-sitter-language-[0-9][^"]*/Cargo.toml"' | head -n 1 \
  | sed 's/^"manifest_path":"//; s/"$//')"
if [ -z "$_dsh_tsl_manifest" ]; then
  echo "wasm-env: cannot find the tree-sitter-language crate via cargo metadata" >&2
  return 1 2>/dev/null || exit 1
fi
# -Os: clang at -O3 inlines tree-sitter's parser steps into one 29 KB
# ts_parser_parse; V8 then keeps ~13 MiB of the host process after
# optimising it (docs/performance.md). -Os halves it and parses as fast here.
export CFLAGS_wasm32_unknown_unknown="-isystem $(dirname "$_dsh_tsl_manifest")/wasm/include -include $_dsh_root/scripts/wasm-shim.h -Os"
unset _dsh_root _dsh_tsl_manifest
