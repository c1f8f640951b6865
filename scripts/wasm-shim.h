/* Force-included (-include) into every C file built for wasm32 (see
 * scripts/wasm-env.sh). tree-sitter-bash's scanner.c calls isdigit(), but the
 * small libc headers tree-sitter ships for wasm32 have no <ctype.h> to declare
 * it, and C99 rejects the implicit declaration. */
#ifndef DSH_ALLOW_WASM_SHIM_H
#define DSH_ALLOW_WASM_SHIM_H
static inline int dsh_allow_isdigit(int c) { return c >= '0' && c <= '9'; }
#define isdigit(c) dsh_allow_isdigit(c)
#endif
