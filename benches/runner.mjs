// Start-up cost of `dsh-allow run` against a bare exec of the same program,
// with the default workspace profile (a real Landlock ruleset on Linux).
// Run after `bash scripts/build.sh`:  node benches/runner.mjs [rounds] [runner]
//
// Bare and fenced runs are interleaved so drift on a shared machine hits all
// of them; the figure is the difference of the medians.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const runner = process.argv[3] ? path.resolve(process.argv[3]) : path.join(here, '..', 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow');
if (!fs.existsSync(runner)) {
  console.error(`runner bench: ${runner} missing; run scripts/build.sh first`);
  process.exit(1);
}
const rounds = Number(process.argv[2] ?? 400);

// A workspace outside the temp folders (the baseline opens those fully, which
// would make the ruleset smaller than a real one).
const home = os.homedir();
const ws = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-'));
fs.writeFileSync(path.join(ws, 'Cargo.toml'), '[package]\nname = "x"\n');
// The same in a git repository: the runner shuts its hooks and config with
// read-only mounts in a mount namespace of its own (persistence "shut").
const repo = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-repo-'));
fs.writeFileSync(path.join(repo, 'Cargo.toml'), '[package]\nname = "x"\n');
if (spawnSync('git', ['init', '-q', repo]).status !== 0) throw new Error('git init failed');
// The harness's home, and in it where the plugin keeps compiled fences (a
// protected path, as it must be).
const harness = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-harness-'));
const fenceCache = path.join(harness, 'dsh-allow-fence');
fs.mkdirSync(fenceCache);
const profile = (enforce, { workspace = ws, persistence = 'shut' } = {}) =>
  JSON.stringify({
    workspace,
    home,
    harnessHome: harness,
    platform: 'linux',
    mode: 'workspace-write',
    rules: [],
    grants: [],
    protectedFiles: [path.join(harness, 'dsh-allow.json'), path.join(harness, 'dsh-allow-audit.ndjson'), fenceCache],
    enforce,
    persistence,
  });

const target = ['/bin/true'];
const variants = {
  bare: target,
  'run, enforce off': [runner, 'run', '--profile-json', profile('off'), '--', ...target],
  'run, full fence, compiled': [runner, 'run', '--profile-json', profile('full'), '--', ...target],
  'run, full fence, kept': [runner, 'run', '--profile-json', profile('full'), '--fence-cache', fenceCache, '--', ...target],
  'kept, repository shut': [runner, 'run', '--profile-json', profile('full', { workspace: repo }), '--fence-cache', fenceCache, '--', ...target],
  'kept, repository open': [runner, 'run', '--profile-json', profile('full', { workspace: repo, persistence: 'open' }), '--fence-cache', fenceCache, '--', ...target],
};
const cwdOf = (k) => (k.includes('repository') ? repo : ws);
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
function once(argv, cwd = ws) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, stdio: 'ignore' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${argv[0]} exited ${r.status}`);
  return ms;
}
try {
  // The kept fence is used once every folder it depends on has been still
  // for a second (the workspace was just made, and its first run makes the
  // `target/` its Cargo.toml calls for).
  for (const [k, argv] of Object.entries(variants)) once(argv, cwdOf(k));
  await new Promise((r) => setTimeout(r, 1100));
  for (let i = 0; i < 20; i++) for (const [k, argv] of Object.entries(variants)) once(argv, cwdOf(k)); // warm-up
  const kept = variants['run, full fence, kept'];
  const report = spawnSync(kept[0], [...kept.slice(1, -2), '--report-fence', ...kept.slice(-2)], { cwd: ws, encoding: 'utf8' });
  if (!report.stderr.includes('dsh-allow fence: reused')) throw new Error(`the kept fence is not reused: ${report.stderr}`);
  // Each round runs the variants in a fresh random order: work a run leaves
  // behind (a fenced process frees its Landlock domain from a kernel work
  // queue) must not always land on the same neighbour.
  const order = Object.keys(variants);
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < rounds; i++) {
    for (let j = order.length - 1; j > 0; j--) {
      const k = Math.floor(random() * (j + 1));
      [order[j], order[k]] = [order[k], order[j]];
    }
    for (const k of order) samples[k].push(once(variants[k], cwdOf(k)));
  }
} finally {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(repo, { recursive: true, force: true });
  fs.rmSync(harness, { recursive: true, force: true });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const bare = median(samples.bare);
console.log(`dsh-allow run start-up, ${rounds} rounds, Node ${process.version}, ${runner}`);
for (const [k, xs] of Object.entries(samples)) {
  const m = median(xs);
  console.log(`${k.padEnd(27)} median ${m.toFixed(3)} ms${k === 'bare' ? '' : `  (+${(m - bare).toFixed(3)} ms over bare)`}`);
}
