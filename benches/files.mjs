// What the runner's watch over the call's files costs: per creating open
// (the hand makes the file, the supervisor keeps its identity), per removal
// of the call's own file, per removal in a folder where Landlock grants
// delete (tool state: the supervisor's quick way out), and a whole
// `bash -c true`, each against the same work unfenced.
// Run after `bash scripts/build.sh`:
//   [BENCH_DIR=FOLDER] node benches/files.mjs [rounds] [runner] [files]
// Bare and fenced runs alternate so drift on a shared machine hits both; the
// figure is the difference of the medians, divided by the files per run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const runner = process.argv[3] ? path.resolve(process.argv[3]) : path.join(here, '..', 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow');
if (!fs.existsSync(runner)) {
  console.error(`files bench: ${runner} missing; run scripts/build.sh first`);
  process.exit(1);
}
const rounds = Number(process.argv[2] ?? 15);
const n = Number(process.argv[4] ?? 2000);

// Outside the temp folders, which the baseline opens fully (no watch there).
// BENCH_DIR: another folder to work in (a tmpfs shows the fence's own cost
// where ext4's creates here take 250-600 µs each and drift).
const home = process.env.BENCH_DIR ?? os.homedir();
const ws = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-files-'));
const harness = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-harness-'));
const cache = path.join(harness, 'dsh-allow-fence');
fs.mkdirSync(cache);
fs.mkdirSync(path.join(ws, 'node_modules'));
const profile = JSON.stringify({
  workspace: ws, home, harnessHome: harness, platform: 'linux', mode: 'workspace-write', rules: [], grants: [],
  protectedFiles: [path.join(harness, 'dsh-allow.json'), cache],
});
const py = (code) => ['/usr/bin/python3', '-c', code];
const work = {
  // One process each, so the interpreter's start is paid alike by both.
  create: py(`import os\nfor i in range(${n}): os.close(os.open(f"f{i}", os.O_CREAT|os.O_WRONLY, 0o644))`),
  'create+remove (own)': py(`import os\nfor i in range(${n}): os.close(os.open(f"g{i}", os.O_CREAT|os.O_WRONLY, 0o644))\nfor i in range(${n}): os.unlink(f"g{i}")`),
  'create+remove (tool state)': py(`import os\nfor i in range(${n}): os.close(os.open(f"node_modules/h{i}", os.O_CREAT|os.O_WRONLY, 0o644))\nfor i in range(${n}): os.unlink(f"node_modules/h{i}")`),
  'bash -c true': ['/bin/bash', '-c', 'true'],
};
const fenced = (argv) => [runner, 'run', '--profile-json', profile, '--fence-cache', cache, '--', ...argv];
function once(argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ws, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ').slice(0, 200)} exited ${r.status}: ${r.stderr}`);
  return ms;
}
const clean = () => {
  for (const e of fs.readdirSync(ws)) if (/^[fg]\d+$/.test(e)) fs.rmSync(path.join(ws, e));
};
// Per operation, timed inside the call: a loop of creates, then of
// removals of what it made, in the workspace (the supervisor's own-entry
// way) and in tool state (Landlock grants delete; the filter lets it run).
const perOp = (dir) =>
  py(`import os, time\nn = ${n}\nt0 = time.perf_counter()\nfor i in range(n): os.close(os.open(f"${dir}p{i}", os.O_CREAT|os.O_WRONLY, 0o644))\nt1 = time.perf_counter()\nfor i in range(n): os.unlink(f"${dir}p{i}")\nt2 = time.perf_counter()\nprint((t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6)`);
function timed(argv) {
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ws, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ').slice(0, 200)} exited ${r.status}: ${r.stderr}`);
  return r.stdout.trim().split(/\s+/).map(Number);
}
const ops = {};
const results = {};
try {
  once(fenced(['/bin/true']));
  await new Promise((r) => setTimeout(r, 1100)); // the kept fence wants its folders still
  for (const [name, argv] of Object.entries(work)) {
    const bare = [];
    const fence = [];
    for (let i = 0; i < rounds + 2; i++) {
      clean();
      const b = once(argv);
      clean();
      const f = once(fenced(argv));
      if (i >= 2) {
        bare.push(b);
        fence.push(f);
      }
    }
    results[name] = { bare, fence };
  }
  for (const [where, dir] of [['workspace (own)', ''], ['tool state', 'node_modules/']]) {
    const o = { create: [[], []], remove: [[], []] };
    for (let i = 0; i < rounds; i++) {
      const [bc, br] = timed(perOp(dir));
      const [fc, fr] = timed(fenced(perOp(dir)));
      o.create[0].push(bc); o.create[1].push(fc); o.remove[0].push(br); o.remove[1].push(fr);
    }
    ops[where] = o;
  }
} finally {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(harness, { recursive: true, force: true });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`files under the fence, ${rounds} rounds, ${n} files per run, ${runner}`);
for (const [name, { bare, fence }] of Object.entries(results)) {
  const b = median(bare);
  const f = median(fence);
  const per = name === 'bash -c true' ? '' : `  ${(((f - b) * 1000) / (name.includes('create+remove') ? 2 * n : n)).toFixed(1)} µs per ${name.includes('remove') && !name.includes('+') ? 'removal' : 'entry'}`;
  console.log(`${name.padEnd(22)} bare ${b.toFixed(1)} ms  fenced ${f.toFixed(1)} ms  (${(f / b).toFixed(2)}x)${per}`);
}
console.log('per operation, timed in the call (median of the rounds):');
for (const [where, o] of Object.entries(ops)) {
  const line = (k) => `${k} ${median(o[k][1]).toFixed(1)} µs (bare ${median(o[k][0]).toFixed(1)})`;
  console.log(`  ${where.padEnd(16)} ${line('create')}  ${line('remove')}`);
}
