#!/usr/bin/env bash
# Which of the runner's functions a fenced call runs, so that the linker
# puts them side by side (scripts/build.sh, --symbol-ordering-file).
#
# Why: each process of a call (the runner, its child, the command before its
# exec) faults the binary's text in again, since a fork copies no page table
# of a file mapping, and each fault maps at most 16 pages around it. The
# code one call runs (~380 functions, ~350 KB) was spread over 29 of those
# windows of a 2.6 MB text: ~60 text faults a call. Side by side it is 7.
#
# How: a uprobe on the first instruction of every function in the text of a
# copy of the runner, five calls of `bash -c true` as the plugin starts them
# (a kept fence held by the keeper, in a git repository), and every function
# some process of a call hit, the keeper's own left out. Root only (tracefs).
# Run after `make build` when tests/hot_layout.rs says the list no longer
# matches (the names carry a hash of the crate's version, toolchain and
# dependencies), then commit it. A few minutes:
#   sudo bash scripts/runner-hot-functions.sh [RUNNER]   # writes scripts/runner-hot-functions.txt
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
runner="${1:-$ROOT/pkg/bin/linux-x64/dsh-allow}"
T=/sys/kernel/tracing
GROUP=dshallowhot

[ "$(id -u)" = 0 ] || { echo "runner-hot-functions: needs root (uprobes)" >&2; exit 1; }
[ -e "$T/uprobe_events" ] || mount -t tracefs none "$T"

# Probes a run before us left (killed) go first.
# (One whose file is gone may refuse to go: not ours to stop on.)
{ grep "^p:$GROUP/" "$T/uprobe_events" || true; } | sed 's/^p:\([^ ]*\) .*/-:\1/' | while read -r p; do echo "$p" >>"$T/uprobe_events" 2>/dev/null || true; done
work="$(mktemp -d "$HOME/.dsh-allow-hot-XXXXXX")"
probes="$work/probes"
cleanup() {
  echo 0 >"$T/events/$GROUP/enable" 2>/dev/null || true
  # One probe a write: tracefs takes no line split across two.
  [ -f "$probes" ] && sed 's/^p:\([^ ]*\) .*/-:\1/' "$probes" | while read -r p; do echo "$p" >>"$T/uprobe_events"; done 2>/dev/null || true
  pkill -f "$work/runner keep" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The probes go on a copy (a uprobe is set on an inode), which keeps a
# keeper of its own.
cp "$runner" "$work/runner"
# The executable segment: where its file offset maps in memory.
read -r off vaddr size < <(readelf -lW "$work/runner" | awk '$1 == "LOAD" && $8 == "E" { print $2, $3, $5 }')
nm --defined-only "$work/runner" | awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' | sort -u -k1,1 >"$work/functions"
python3 - "$work" "$GROUP" "$off" "$vaddr" "$size" <<'PY'
import sys
work, group, off, vaddr, size = sys.argv[1], sys.argv[2], *(int(x, 16) for x in sys.argv[3:])
with open(f"{work}/functions") as f, open(f"{work}/probes", "w") as probes, open(f"{work}/index", "w") as index:
    for n, line in enumerate(f):
        a, name = line.split()
        a = int(a, 16)
        if vaddr <= a < vaddr + size:
            probes.write(f"p:{group}/f{n} {work}/runner:0x{a - vaddr + off:x}\n")
            index.write(f"{n} {name}\n")
PY
while read -r p; do echo "$p" >>"$T/uprobe_events"; done <"$probes"

# A workspace outside the temp folders, a git repository, a harness home
# whose fence cache is protected, as in benches/runner.mjs.
ws="$work/ws" harness="$work/harness"
mkdir -p "$ws" "$harness/dsh-allow-fence"
git init -q "$ws"
cat >"$work/profile.json" <<EOF
{"workspace":"$ws","home":"$HOME","harnessHome":"$harness","platform":"linux","mode":"workspace-write",
 "rules":[],"grants":[],"protectedFiles":["$harness/dsh-allow.json","$harness/dsh-allow-audit.ndjson","$work/profile.json","$harness/dsh-allow-fence"],
 "enforce":"full","persistence":"shut"}
EOF
# A call takes milliseconds, under every probe a second or so. On some
# machines a traced runner never returns (seen on an AMD EPYC VM, Linux
# 6.18: it spins in the first hash table it fills, whatever the build; an
# untraced one does not): the script stops and says so, writing nothing.
call() {
  local code=0
  (cd "$ws" && timeout 60 "$work/runner" run --profile-file "$work/profile.json" --fence-cache "$harness/dsh-allow-fence" -- /bin/bash -c true) || code=$?
  if [ "$code" = 124 ]; then
    echo "runner-hot-functions: a call under the probes did not end in 60 s; nothing written" >&2
    exit 1
  fi
  return "$code"
}
# Compiled and kept, then held once its folders have been still a second.
for _ in 1 2 3; do call; done
sleep 1.2
call
held() { (cd "$ws" && "$work/runner" run --profile-file "$work/profile.json" --fence-cache "$harness/dsh-allow-fence" --report-fence -- /bin/true 2>&1 | grep -q '^dsh-allow held: joined'); }
held || { echo "runner-hot-functions: the call does not join a held fence; nothing traced" >&2; exit 1; }
echo 65536 >"$T/buffer_size_kb"
echo >"$T/trace"
# Some instructions cannot take a probe (the kernel says so and sets the rest).
echo 1 >"$T/events/$GROUP/enable" 2>/dev/null || true
for _ in 1 2 3 4 5; do call; done
echo 0 >"$T/events/$GROUP/enable"
keeper="$(pgrep -f "$work/runner keep" | head -1 || true)"

if grep -q 'overrun: [1-9]' "$T"/per_cpu/cpu*/stats; then
  echo "runner-hot-functions: the trace buffer overran; nothing written" >&2
  exit 1
fi

# Every function hit by a process other than the keeper, in the order of
# the text it came from.
grep -v '^#' "$T/trace" | awk -v k="-${keeper:-none} " 'index($0, k) == 0' |
  grep -o ': f[0-9]*:' | grep -o '[0-9]*' | sort -un >"$work/hit"
awk 'NR == FNR { hit[$1] = 1; next } ($1 in hit) { print $2 }' "$work/hit" "$work/index" >"$work/hot"
# A call that compiled its fence (the keeper too slow under the probes)
# ran another path: its list would be the wrong one.
if grep -q '5fence12compile_with' "$work/hot"; then
  echo "runner-hot-functions: a traced call compiled its fence instead of joining the held one; nothing written" >&2
  exit 1
fi
out="$ROOT/scripts/runner-hot-functions.txt"
{
  echo "# The runner's functions a fenced call runs, in the order of the text they"
  echo "# came from: scripts/build.sh links them side by side. Made by"
  echo "# scripts/runner-hot-functions.sh (root, a few minutes); tests/hot_layout.rs"
  echo "# says when too much of it no longer matches the runner's code."
  cat "$work/hot"
} >"$work/list"
mv "$work/list" "$out"
echo "runner-hot-functions: $(wc -l <"$work/hot") functions in $out" >&2
