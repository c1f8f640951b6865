// Start-up cost of `dsh-allow run` against a bare exec of the same program,
// with the default workspace profile (a real Landlock ruleset on Linux).
// Run after `bash scripts/build.sh`:
//   node benches/runner.mjs [rounds] [runner] [--against OLD-RUNNER]
//
// Bare and fenced runs are interleaved so drift on a shared machine hits all
// of them; each figure is a difference (or ratio) of medians from the same
// run. Besides `/bin/true` under each kind of fence, `bash -c true` run as
// the plugin starts it (the profile by file, kept fences and the keeper that
// holds them, in a git repository) against a bare `bash -c true`: wall time,
// and CPU time (`perf stat -e task-clock` over the whole process tree, in a
// second pass of alternating runs; a keeper's own CPU time is read from its
// /proc entry and counted per call on top). With --against, the same
// variants with another runner (e.g. the previous build), alternating with
// this one, each with a fence cache of its own. With --floor, `bash -c
// true` also under benches/floor.c's four rungs (the kernel mechanisms a
// fence rests on and nothing else), in the same alternation: the least a
// runner built this way (an init, its own /proc, a supervisor in poll)
// costs on this kernel. Its rungs 2 and 3 build their 14 rules each call,
// where the runner's come held.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFloor } from './floor-build.mjs';
import { keeperCpu as keeperCpuOf } from './keeper-cpu.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const againstAt = args.indexOf('--against');
const against = againstAt < 0 ? undefined : path.resolve(args.splice(againstAt, 2)[1]);
const floorAt = args.indexOf('--floor');
if (floorAt >= 0) args.splice(floorAt, 1);
const runner = args[1] ? path.resolve(args[1]) : path.join(here, '..', 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow');
for (const r of [runner, against].filter(Boolean)) {
  if (!fs.existsSync(r)) {
    console.error(`runner bench: ${r} missing; run scripts/build.sh first`);
    process.exit(1);
  }
}
const rounds = Number(args[0] ?? 400);

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
// Another, where a file is made just before each call (as the model's
// edits do between calls): the workspace's times no longer vouch for what
// the kept fence looked up there, which is proven again.
const edited = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-edited-'));
if (spawnSync('git', ['init', '-q', edited]).status !== 0) throw new Error('git init failed');
let edits = 0;
const edit = () => fs.writeFileSync(path.join(edited, `edit-${edits++ % 50}.txt`), 'x');
// And where a file comes and goes in the temp folder before each call (as
// compilers and test runs do there): the call finds the host's folders in
// it again unless the keeper vouches that none came or went.
const tempFile = path.join(os.tmpdir(), `dsh-allow-bench-temp-${process.pid}`);
let temps = 0;
const churn = () => (temps++ % 2 === 0 ? fs.writeFileSync(tempFile, 'x') : fs.rmSync(tempFile, { force: true }));
// The harness's home, and in it where the plugin keeps compiled fences (a
// protected path, as it must be) and the profiles it hands the runner.
const harness = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-harness-'));
const cacheOf = (r) => path.join(harness, r === runner ? 'dsh-allow-fence' : 'dsh-allow-fence-against');
const profilesDir = path.join(harness, 'dsh-allow-profiles');
for (const d of [cacheOf(runner), cacheOf(against), profilesDir]) fs.mkdirSync(d, { recursive: true });
const profile = (enforce, { workspace = ws, persistence = 'shut', cache } = {}) =>
  JSON.stringify({
    workspace,
    home,
    harnessHome: harness,
    platform: 'linux',
    mode: 'workspace-write',
    rules: [],
    grants: [],
    protectedFiles: [path.join(harness, 'dsh-allow.json'), path.join(harness, 'dsh-allow-audit.ndjson'), profilesDir, ...(cache ? [cache] : [])],
    enforce,
    persistence,
  });
const profileFile = (r, workspace = repo) => {
  const file = path.join(profilesDir, `${r === runner ? 'this' : 'against'}${workspace === repo ? '' : '-edited'}.json`);
  fs.writeFileSync(file, profile('full', { workspace, cache: cacheOf(r) }));
  return file;
};

const target = ['/bin/true'];
const bash = ['/bin/bash', '-c', 'true'];
function variantsOf(r, tag) {
  const c = cacheOf(r);
  const kept = (opts) => ['--profile-json', profile('full', { ...opts, cache: c }), '--fence-cache', c];
  return {
    [`run, enforce off${tag}`]: [r, 'run', '--profile-json', profile('off'), '--', ...target],
    [`run, full fence, compiled${tag}`]: [r, 'run', '--profile-json', profile('full'), '--', ...target],
    [`run, full fence, kept${tag}`]: [r, 'run', ...kept({}), '--', ...target],
    [`kept, repository shut${tag}`]: [r, 'run', ...kept({ workspace: repo }), '--', ...target],
    [`kept, repository open${tag}`]: [r, 'run', ...kept({ workspace: repo, persistence: 'open' }), '--', ...target],
    [`bash -c true, as the plugin${tag}`]: [r, 'run', '--profile-file', profileFile(r), '--fence-cache', c, '--', ...bash],
    [`bash -c true, as the plugin, a file just made${tag}`]: [r, 'run', '--profile-file', profileFile(r, edited), '--fence-cache', c, '--', ...bash],
  };
}
function floorVariants() {
  const floor = buildFloor(path.join(harness, 'floor'));
  // What the default profile grants, coarsely: 14 rules, against ~230.
  const reads = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib64', '/opt', '/proc', '/dev', '/sys', home];
  const rules = [...reads.flatMap((p) => ['-r', p]), '-w', repo, '-w', os.tmpdir(), '-w', '/dev/null'];
  const rung = (n) => [floor, String(n), ...rules, '--', ...bash];
  return {
    'bash -c true, floor 0: a process between': rung(0),
    'bash -c true, floor 1: + own pid, mounts, /proc': rung(1),
    'bash -c true, floor 2: + Landlock': rung(2),
    'bash -c true, floor 3: + filter, supervisor': rung(3),
  };
}
const variants = {
  bare: target,
  'bash -c true, bare': bash,
  ...variantsOf(runner, ''),
  ...(against ? variantsOf(against, ' (against)') : {}),
  ...(floorAt >= 0 ? floorVariants() : {}),
};
// Measured in a pass of their own, after the others: a change in the temp
// folder is seen by every call after it, whichever variant made it.
const churned = Object.fromEntries([[runner, ''], [against, ' (against)']].filter(([r]) => r)
  .map(([r, tag]) => [`bash -c true, as the plugin, the temp folder changed${tag}`, variants[`bash -c true, as the plugin${tag}`]]));
const cwdOf = (k) => (k.includes('a file just made') ? edited : k.includes('repository') || k.startsWith('bash') ? repo : ws);
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
function once(k, argv, cwd) {
  if (cwd === edited) edit();
  if (k?.includes('the temp folder changed')) churn();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, stdio: 'ignore' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${argv[0]} exited ${r.status}`);
  return ms;
}
/** CPU time of one run and all it starts (ms), by perf's task clock. */
function cpuOf(argv, cwd, k) {
  if (cwd === edited) edit();
  if (k?.includes('the temp folder changed')) churn();
  const r = spawnSync('perf', ['stat', '-x', ',', '-e', 'task-clock', '--', ...argv], { cwd, encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const line = r.stderr.split('\n').find((l) => l.includes('task-clock'));
  return line === undefined ? undefined : Number(line.split(',')[0]);
}
/** The keeper serving runner `r`'s fence cache: its CPU time in ms. */
const keeperCpu = (r) => keeperCpuOf(r, cacheOf(r));
const keeperBefore = {};
try {
  // The kept fence is used once every folder it depends on has been still
  // for a second (the workspace was just made, and its first run makes the
  // `target/` its Cargo.toml calls for).
  for (const [k, argv] of Object.entries(variants)) once(undefined, argv, cwdOf(k));
  await new Promise((r) => setTimeout(r, 1100));
  for (let i = 0; i < 20; i++) for (const [k, argv] of Object.entries(variants)) once(undefined, argv, cwdOf(k)); // warm-up
  const kept = variants['bash -c true, as the plugin'];
  const report = spawnSync(kept[0], [...kept.slice(1, -4), '--report-fence', ...kept.slice(-4)], { cwd: repo, encoding: 'utf8' });
  if (!report.stderr.includes('dsh-allow fence: reused')) throw new Error(`the kept fence is not reused: ${report.stderr}`);
  const held = report.stderr.split('\n').find((l) => l.startsWith('dsh-allow held: ')) ?? 'dsh-allow held: (no keeper in this runner)';
  for (const r of [runner, against].filter(Boolean)) keeperBefore[r] = keeperCpu(r);
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
    for (const k of order) samples[k].push(once(k, variants[k], cwdOf(k)));
  }
  // CPU: the bash variants again, alternating, each under perf stat.
  const cpuKeys = Object.keys(variants).filter((k) => k.startsWith('bash'));
  const cpu = Object.fromEntries(cpuKeys.map((k) => [k, []]));
  for (let i = 0; i < Math.min(rounds, 100); i++) {
    for (const k of cpuKeys) {
      const ms = cpuOf(variants[k], cwdOf(k), k);
      if (ms !== undefined) cpu[k].push(ms);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const bare = median(samples.bare);
  console.log(`dsh-allow run start-up, ${rounds} rounds, Node ${process.version}, ${runner}${against ? ` against ${against}` : ''}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`(${held.slice('dsh-allow '.length)})`);
  // The keeper's CPU a call so far (before the pass below asks it more): it
  // answers every call of a variant that keeps fences, in both passes.
  const keeperPerCall = {};
  for (const r of [runner, against].filter(Boolean)) {
    const kept = Object.entries(variants).filter(([, argv]) => argv[0] === r && argv.includes('--fence-cache'));
    const asked = kept.length * rounds + kept.filter(([k]) => cpuKeys.includes(k)).length * Math.min(rounds, 100);
    keeperPerCall[r] = keeperBefore[r] === undefined ? 0 : (keeperCpu(r) - keeperBefore[r]) / asked;
  }
  // The temp folder changed before each call, alternating the runners.
  for (const k of Object.keys(churned)) {
    samples[k] = [];
    cpu[k] = [];
  }
  for (let i = 0; i < rounds; i++) {
    for (const [k, argv] of Object.entries(churned)) {
      samples[k].push(once(k, argv, repo));
      if (i < Math.min(rounds, 100)) {
        const ms = cpuOf(argv, repo, k);
        if (ms !== undefined) cpu[k].push(ms);
      }
    }
  }
  for (const [k, xs] of Object.entries(samples)) {
    const m = median(xs);
    const base = k.startsWith('bash') ? median(samples['bash -c true, bare']) : bare;
    const over = k === 'bare' || k === 'bash -c true, bare' ? '' : `  (+${(m - base).toFixed(3)} ms over bare)`;
    const c = cpu[k]?.length ? `, CPU ${median(cpu[k]).toFixed(2)} ms` : '';
    console.log(`${k.padEnd(40)} median ${m.toFixed(3)} ms${c}${over}`);
  }
  for (const [r, tag] of [[runner, ''], [against, ' (against)']].filter(([r]) => r)) {
    const k = `bash -c true, as the plugin${tag}`;
    const keeper = keeperPerCall[r];
    const wall = median(samples[k]) / median(samples['bash -c true, bare']);
    const bareCpu = median(cpu['bash -c true, bare'] ?? []);
    const cpuRatio = median(cpu[k] ?? []) / bareCpu;
    const withKeeper = (median(cpu[k] ?? []) + keeper) / bareCpu;
    console.log(`bash -c true as the plugin starts it${tag}: wall ${wall.toFixed(2)}× bare, CPU ${cpuRatio.toFixed(2)}× bare (${withKeeper.toFixed(2)}× with the keeper's ${keeper.toFixed(3)} ms a call)`);
  }
  const floors = Object.keys(variants).filter((k) => k.includes(', floor '));
  if (floors.length) {
    const bareWall = median(samples['bash -c true, bare']);
    const bareCpu = median(cpu['bash -c true, bare']);
    for (const k of floors) {
      console.log(`${k.slice('bash -c true, '.length)}: wall ${(median(samples[k]) / bareWall).toFixed(2)}× bare, CPU ${(median(cpu[k]) / bareCpu).toFixed(2)}× bare`);
    }
    const top = floors[floors.length - 1];
    const over = median(cpu['bash -c true, as the plugin']) - median(cpu[top]);
    console.log(`the runner over the floor's top rung: CPU +${over.toFixed(2)} ms a call, wall +${(median(samples['bash -c true, as the plugin']) - median(samples[top])).toFixed(2)} ms`);
  }
} finally {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(repo, { recursive: true, force: true });
  fs.rmSync(edited, { recursive: true, force: true });
  fs.rmSync(harness, { recursive: true, force: true });
  fs.rmSync(tempFile, { force: true });
}
