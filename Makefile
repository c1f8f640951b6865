# dsh-allow: the two commands a user needs are `make demo` and `make test`;
# both install what they need first (scripts/setup.sh, idempotent).
SHELL := /bin/bash
.DEFAULT_GOAL := demo
.PHONY: setup setup-dsh build demo test bench clean

# Toolchain: Debian packages, wasm-pack, wasm-bindgen-cli (see scripts/setup.sh).
setup:
	@bash scripts/setup.sh

# Node 22 and the real DSH host for the end-to-end tests (when that script exists).
setup-dsh:
	@if [ -f scripts/setup-dsh.sh ]; then bash scripts/setup-dsh.sh; \
	 else echo "setup-dsh: scripts/setup-dsh.sh not present, skipping"; fi

# Native CLI + wasm core (nodejs and web) + the npm package in pkg/.
build: setup
	@bash scripts/build.sh

# The spec's examples, decided by the core.
demo: build setup-dsh
	@bash scripts/demo.sh

# Everything: set-up, build, cargo test, wasm-pack test (Chromium),
# node --test (plugin, package), the real-DSH end-to-end tests; a summary.
test:
	@bash scripts/test.sh

# Benchmarks (criterion) when the crate has them.
bench: setup
	@if compgen -G 'benches/*.rs' >/dev/null; then flock /tmp/dsh-allow-cargo.lock cargo bench; \
	 else echo "bench: no benches/ yet"; fi

clean:
	rm -rf pkg target/wasm target/wasm-pack target/test-logs
