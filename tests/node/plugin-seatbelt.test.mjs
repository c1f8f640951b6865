// The macOS wiring, run anywhere: the Seatbelt probe's tier logic and the
// darwin confine, with the platform injected and a stand-in for
// /usr/bin/sandbox-exec. The stand-in records its argv and runs the command
// unconfined (or follows a scripted outcome per tier: abort, refuse the
// profile, report which probe checks were fenced). It proves nothing about
// Seatbelt itself — that is tests/sbpl.rs's kernel suite and
// plugin-seatbelt-kernel.test.mjs, on a Mac — only the argv, the -D
// parameters, the claimed one-shot grant, the failure rules and which tier
// the probe takes from what it saw.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Fence, SANDBOX_EXEC, SEATBELT_FAILURE_PREFIX, SEATBELT_NESTED_REASON, probeSeatbelt } from '../../plugin/fence.js'
import { makePlanner } from '../../plugin/confine.js'
import { GrantStore, onceRules } from '../../plugin/grants.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const core = await import(join(ROOT, 'pkg', 'core', 'index.js'))
const ALL = ['read', 'write', 'create', 'delete', 'execute']

const STANDIN = `#!${process.execPath}
// Stand-in for /usr/bin/sandbox-exec: -p TEXT, -D NAME=VALUE..., then the command.
const { appendFileSync } = require('node:fs')
const { spawnSync } = require('node:child_process')
const args = process.argv.slice(2)
let i = 0
let text
const params = {}
while (i < args.length) {
  if (args[i] === '-p') { text = args[i + 1]; i += 2 }
  else if (args[i] === '-D') { const at = args[i + 1].indexOf('='); params[args[i + 1].slice(0, at)] = args[i + 1].slice(at + 1); i += 2 }
  else break
}
const command = args.slice(i)
appendFileSync(process.env.STANDIN_LOG, JSON.stringify({ argv: args, text, params, command }) + '\\n')
const fail = (code, why) => { process.stderr.write('sandbox-exec: ' + why + '\\n'); process.exit(code) }
if (text === undefined || command.length === 0) fail(64, 'usage')
for (const m of text.matchAll(/\\(param "([^"]+)"\\)/g)) if (!(m[1] in params)) fail(65, 'unbound variable: ' + m[1])
const tier = (/; enforce: (\\w+)/.exec(text) ?? [])[1]
const outcome = JSON.parse(process.env.STANDIN_OUTCOMES ?? '{}')[tier] ?? 'run'
if (outcome === 'abort') process.kill(process.pid, 'SIGABRT')
else if (outcome === 'refuse') fail(65, 'invalid data type of path filter')
else if (outcome === 'nested') fail(71, 'sandbox_apply: Operation not permitted')
else if (typeof outcome === 'object') {
  const caps = ['read', 'write', 'create', 'delete', 'execute']
  const lines = ['control=open', ...caps.map((c) => c + '=' + (outcome.fenced.includes(c) ? 'fenced' : 'open')), 'readElsewhere=' + (outcome.elsewhere ?? 'open'), 'hooks=' + (outcome.hooks ?? 'open')]
  process.stdout.write(lines.join('\\n') + '\\n')
} else {
  const r = spawnSync(command[0], command.slice(1), { stdio: 'inherit' })
  if (r.error) fail(71, 'execvp() of ' + command[0] + ' failed: ' + r.error.message)
  process.exit(r.status ?? 1)
}
`

/** A scratch folder with the stand-in, its log, and the outcomes it follows. */
function world(t, outcomes = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-allow-seatbelt-')))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const standin = join(dir, 'sandbox-exec')
  writeFileSync(standin, STANDIN)
  chmodSync(standin, 0o755)
  const log = join(dir, 'argv.ndjson')
  writeFileSync(log, '')
  process.env.STANDIN_LOG = log
  process.env.STANDIN_OUTCOMES = JSON.stringify(outcomes)
  const runs = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  mkdirSync(join(dir, 'dsh'))
  return { dir, standin, runs, scratchParent: join(dir, 'dsh') }
}

function counting(compile = core.compileProfile) {
  const calls = []
  const compileProfile = (request, host) => {
    calls.push({ request, host })
    return compile(request, host)
  }
  return { compileProfile, calls }
}

const GUARDED = { fenced: ALL }
const tierOf = (run) => /; enforce: (\w+)/.exec(run.text)[1]

// --- the probe ---------------------------------------------------------------

test('auto probes full first and lands on guarded when /bin/sh does not survive full', async (t) => {
  const w = world(t, { full: 'abort', guarded: GUARDED })
  const { compileProfile, calls } = counting()
  const fence = new Fence({
    platform: 'macos', enforce: 'auto', scratchParent: w.scratchParent,
    seatbelt: { compileProfile, host: core.nodeHost, sandboxExec: w.standin },
  })
  const status = await fence.ready()
  assert.equal(status.level, 'guarded')
  assert.deepEqual(status.capabilities, ALL)
  assert.equal(status.enforcement, 'partial')
  assert.equal(fence.current(), status)
  for (const cap of ALL) assert.equal(status.why[cap], 'Seatbelt refused it in the probe')
  assert.match(status.declined.full, /\/bin\/sh did not survive the full profile \(killed by SIGABRT\)/)
  assert.match(status.reason, /^full not taken: /)
  assert.equal(status.persistence.state, 'open', 'the probe saw the hooks written: the decision must know')
  assert.deepEqual(w.runs().map(tierOf), ['full', 'guarded'], 'strongest first, and no further once a tier holds')
  assert.deepEqual(calls.map((c) => [c.request.platform, c.request.enforce]), [['macos', 'full'], ['macos', 'guarded']])
  assert.ok(calls.every((c) => c.host === core.nodeHost), 'the core compiles with nodeHost answering real paths')
})

test('a profile that refuses the probe\'s hook write reports persistence shut', async (t) => {
  const w = world(t, { guarded: { ...GUARDED, hooks: 'fenced' } })
  const fence = new Fence({
    platform: 'macos', enforce: 'guarded', scratchParent: w.scratchParent,
    seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin },
  })
  const status = await fence.ready()
  assert.equal(status.persistence.state, 'shut')
  // The probe's own profile names the surfaces it checks.
  const [run] = w.runs()
  assert.ok(Object.values(run.params).some((v) => v.endsWith('/ws/.git/hooks')), JSON.stringify(run.params))
})

test('the probe runs /bin/sh under sandbox-exec -p with every path a -D parameter', async (t) => {
  const w = world(t, { guarded: GUARDED })
  const status = await probeSeatbelt({ compileProfile: core.compileProfile, host: core.nodeHost, scratchParent: w.scratchParent, enforce: 'guarded', sandboxExec: w.standin })
  assert.equal(status.level, 'guarded')
  const [run] = w.runs()
  assert.equal(run.argv[0], '-p')
  assert.deepEqual(run.command.slice(0, 2), ['/bin/sh', '-c'])
  assert.match(run.text, /^\(version 1\)$/m)
  const values = Object.values(run.params)
  assert.ok(values.length > 0 && values.every((v) => v.startsWith('/')))
  const probeDir = /^(.*\/\.dsh-allow-probe-[^/]+)\//.exec(values.find((v) => v.includes('.dsh-allow-probe-')))[1]
  assert.equal(dirname(probeDir), w.scratchParent, 'the probe profile names the scratch by its real path')
  assert.ok(values.includes(join(probeDir, 'ws')) && values.includes(join(probeDir, 'harness')))
  assert.ok(!run.text.includes(w.dir), 'no path is spliced into the profile text')
  assert.ok(!existsSync(probeDir), 'the scratch is removed')
})

test('a scratch parent reached through a symlink is probed by its real path', async (t) => {
  const w = world(t, { guarded: GUARDED })
  symlinkSync(w.scratchParent, join(w.dir, 'linked-dsh'))
  await probeSeatbelt({ compileProfile: core.compileProfile, host: core.nodeHost, scratchParent: join(w.dir, 'linked-dsh'), enforce: 'guarded', sandboxExec: w.standin })
  const [run] = w.runs()
  const probe = Object.values(run.params).filter((v) => v.includes('.dsh-allow-probe-'))
  assert.ok(probe.length > 0 && probe.every((v) => v.startsWith(`${w.scratchParent}/`)), JSON.stringify(probe))
})

test('full is taken only when /bin/sh survives it and reads outside the user areas are refused too', async (t) => {
  const w = world(t, { full: { fenced: ALL, elsewhere: 'fenced' } })
  const fence = new Fence({ platform: 'macos', enforce: 'auto', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin } })
  const status = await fence.ready()
  assert.equal(status.level, 'full')
  assert.equal(status.enforcement, 'full')
  assert.equal(status.declined, undefined)
  assert.deepEqual(w.runs().map(tierOf), ['full'])
})

test('a tier never reports more than it was asked for, whatever the kernel refused', async (t) => {
  const w = world(t, { guarded: { fenced: ALL, elsewhere: 'fenced' }, writes: { fenced: ALL, elsewhere: 'fenced' } })
  const probe = (enforce) => probeSeatbelt({ compileProfile: core.compileProfile, host: core.nodeHost, scratchParent: w.scratchParent, enforce, sandboxExec: w.standin })
  assert.equal((await probe('guarded')).level, 'guarded')
  const writes = await probe('writes')
  assert.equal(writes.level, 'writes')
  assert.deepEqual(writes.capabilities, ['write', 'create', 'delete'], 'the decision is told only what that profile fences')
})

test('a full profile that leaves reads elsewhere open counts only as guarded', async (t) => {
  const w = world(t, { full: { fenced: ALL, elsewhere: 'open' } })
  const status = await probeSeatbelt({ compileProfile: core.compileProfile, host: core.nodeHost, scratchParent: w.scratchParent, enforce: 'full', sandboxExec: w.standin })
  assert.equal(status.level, 'guarded')
  const absent = world(t, { full: { fenced: ALL, elsewhere: 'absent' } })
  const unseen = await probeSeatbelt({ compileProfile: core.compileProfile, host: core.nodeHost, scratchParent: absent.scratchParent, enforce: 'full', sandboxExec: absent.standin })
  assert.equal(unseen.level, 'guarded', 'a folder that is not there proves nothing')
})

test('a named tier is met or reported off with the reason, never weakened', async (t) => {
  const w = world(t, { full: 'abort', guarded: GUARDED })
  const full = new Fence({ platform: 'macos', enforce: 'full', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin } })
  const status = await full.ready()
  assert.equal(status.level, 'off')
  assert.deepEqual(status.capabilities, [])
  assert.match(status.reason, /enforce: full is required but the kernel probe reached off \(\/bin\/sh did not survive the full profile/)
  assert.deepEqual(w.runs().map(tierOf), ['full'], 'no weaker tier was tried in its place')

  // guarded asked, but the probe's home file stayed readable: process, so off.
  const v = world(t, { guarded: { fenced: ['write', 'create', 'delete', 'execute'] } })
  const guarded = new Fence({ platform: 'macos', enforce: 'guarded', scratchParent: v.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: v.standin } })
  const off = await guarded.ready()
  assert.equal(off.level, 'off')
  assert.match(off.reason, /enforce: guarded is required but the kernel probe reached process/)

  const u = world(t, { process: { fenced: ['write', 'create', 'delete', 'execute'] } })
  const process_ = new Fence({ platform: 'macos', enforce: 'process', scratchParent: u.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: u.standin } })
  const met = await process_.ready()
  assert.equal(met.level, 'process')
  assert.deepEqual(met.capabilities, ['write', 'create', 'delete', 'execute'])
  assert.equal(met.why.read, 'the probe ran it unhindered')
})

test('auto goes down the tiers one by one and reports off when none holds', async (t) => {
  const w = world(t, { full: 'abort', guarded: 'refuse', process: 'abort', writes: 'refuse' })
  const fence = new Fence({ platform: 'macos', enforce: 'auto', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin } })
  const status = await fence.ready()
  assert.equal(status.level, 'off')
  assert.deepEqual(w.runs().map(tierOf), ['full', 'guarded', 'process', 'writes'])
  assert.match(status.reason, /sandbox-exec refused the writes profile: sandbox-exec: invalid data type/)
})

test('auto falls to writes when exec is not fenced', async (t) => {
  const w = world(t, { full: 'abort', guarded: { fenced: ['read', 'write', 'create', 'delete'] }, process: { fenced: ['write', 'create', 'delete'] }, writes: { fenced: ['write', 'create', 'delete'] } })
  const status = await new Fence({ platform: 'macos', enforce: 'auto', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin } }).ready()
  // guarded's probe saw writes-level fencing; confine would compile the
  // writes profile, so that profile is probed too before auto takes it.
  assert.equal(status.level, 'writes')
  assert.deepEqual(w.runs().map(tierOf), ['full', 'guarded', 'process', 'writes'])
  assert.match(status.declined.guarded, /the guarded profile's probe reached writes \(execute ran unhindered\)/)
  assert.match(status.declined.process, /the process profile's probe reached writes \(read, execute ran unhindered\)/)
})

test('sandbox-exec refused for nesting: off with the nesting reason, no other tier tried', async (t) => {
  const w = world(t, { full: 'nested', guarded: 'nested', process: 'nested', writes: 'nested' })
  const status = await new Fence({ platform: 'macos', enforce: 'auto', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin } }).ready()
  assert.equal(status.level, 'off')
  assert.equal(status.nested, true)
  assert.equal(status.reason, SEATBELT_NESTED_REASON)
  assert.equal(status.reason, 'DSH itself already runs under a Seatbelt profile, and Seatbelt cannot nest (sandbox-exec: sandbox_apply: Operation not permitted)')
  assert.deepEqual(w.runs().map(tierOf), ['full'])
  const named = await new Fence({ platform: 'macos', enforce: 'process', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin } }).ready()
  assert.equal(named.nested, true)
  assert.match(named.reason, /enforce: process is required but the kernel probe reached off \(DSH itself already runs under a Seatbelt profile/)
})

test('a runner that fences nothing gives no level: the probe really ran, unconfined', async (t) => {
  const w = world(t) // every tier: run the command as it is
  const status = await probeSeatbelt({ compileProfile: core.compileProfile, host: core.nodeHost, scratchParent: w.scratchParent, enforce: 'guarded', sandboxExec: w.standin })
  assert.equal(status.level, 'off')
  assert.match(status.reason, /Seatbelt fenced none of the probe's paths/)
  for (const cap of ALL) assert.equal(status.fenced[cap], false, cap)
})

test('no sandbox-exec, no compiler, a profile that does not compile: off with the reason, nothing run', async (t) => {
  const w = world(t, { guarded: GUARDED })
  const missing = await probeSeatbelt({ compileProfile: core.compileProfile, host: core.nodeHost, scratchParent: w.scratchParent, sandboxExec: join(w.dir, 'nope') })
  assert.match(missing.reason, /no Seatbelt runner at .*nope/)
  const noCompiler = await probeSeatbelt({ host: core.nodeHost, scratchParent: w.scratchParent, sandboxExec: w.standin })
  assert.match(noCompiler.reason, /no Seatbelt compiler/)
  const broken = await probeSeatbelt({
    compileProfile: () => { throw new Error('profile request: unknown variant `sideways`') },
    host: core.nodeHost, scratchParent: w.scratchParent, sandboxExec: w.standin,
  })
  assert.equal(broken.level, 'off')
  assert.match(broken.reason, /the guarded probe profile did not compile: profile request: unknown variant/)
  assert.deepEqual(w.runs(), [], 'sandbox-exec never started')
  // The default runner is the fixed path, and only that.
  assert.equal(SANDBOX_EXEC, '/usr/bin/sandbox-exec')
})

test('enforce off and other platforms probe nothing', async (t) => {
  const w = world(t, { guarded: GUARDED })
  const off = await new Fence({ platform: 'macos', enforce: 'off', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: w.standin } }).ready()
  assert.equal(off.level, 'off')
  const other = await new Fence({ platform: undefined, enforce: 'auto', scratchParent: w.scratchParent, seatbelt: { compileProfile: core.compileProfile, sandboxExec: w.standin } }).ready()
  assert.equal(other.level, 'off')
  assert.deepEqual(w.runs(), [])
})

// --- confine on darwin ---------------------------------------------------------

/** The plugin's profile request (index.js), with the one-shot grant claimed by command line. */
function requests({ grants, home, harnessHome, store }) {
  return (policy, command, enforce) => {
    const once = command !== undefined && policy.sessionId !== undefined ? grants.claim(policy.sessionId, command) : []
    return {
      workspace: policy.workspaceRoot, home, harnessHome, platform: 'macos', mode: policy.mode,
      rules: [], grants: [...once], protectedFiles: [store], enforce,
    }
  }
}

function darwin(t, { level = 'guarded', outcomes = {} } = {}) {
  const w = world(t, outcomes)
  const ws = join(w.dir, 'ws')
  const home = join(w.dir, 'home')
  mkdirSync(join(ws, 'build'), { recursive: true })
  mkdirSync(join(home, '.dsh'), { recursive: true })
  writeFileSync(join(ws, 'build', 'out.o'), 'x')
  const store = join(home, '.dsh', 'dsh-allow.json')
  const grants = new GrantStore({ ttlMs: 60_000 })
  t.after(() => grants.clear())
  const { compileProfile, calls } = counting()
  const fence = { current: () => ({ level, enforcement: level === 'full' ? 'full' : 'partial' }) }
  const plan = makePlanner({
    platform: 'macos', fence, compileProfile, host: core.nodeHost, sandboxExec: w.standin,
    profileFor: requests({ grants, home, harnessHome: join(home, '.dsh'), store }),
  })
  const policy = { mode: 'workspace-write', workspaceRoot: ws, sessionId: 's1' }
  return { ...w, ws, home, store, grants, calls, plan, policy }
}

/** The -D parameters of a sandbox-exec argv, by name. */
function paramsOf(argv) {
  const out = {}
  for (let i = 3; i < argv.length && argv[i] === '-D'; i += 2) {
    const at = argv[i + 1].indexOf('=')
    out[argv[i + 1].slice(0, at)] = argv[i + 1].slice(at + 1)
  }
  return out
}

/** The allow lines of a profile that name `path`'s parameter. */
function allowsFor(argv, path) {
  const names = Object.entries(paramsOf(argv)).filter(([, v]) => v === path).map(([k]) => `(param "${k}")`)
  return argv[2].split('\n').filter((l) => l.startsWith('(allow') && names.some((n) => l.includes(n)))
}

test('darwin confine: sandbox-exec -p <text> -D name=value … then the command, compiled per call', (t) => {
  const d = darwin(t)
  const out = d.plan(['bash', '-c', 'ls'], d.policy)
  assert.equal(out.argv[0], d.standin)
  assert.equal(out.argv[1], '-p')
  assert.match(out.argv[2], /; enforce: guarded/)
  assert.deepEqual(out.argv.slice(-3), ['bash', '-c', 'ls'])
  const params = out.argv.slice(3, -3)
  for (let i = 0; i < params.length; i += 2) {
    assert.equal(params[i], '-D')
    assert.match(params[i + 1], /^P\d+=\//, 'a parameter is a name and an absolute path')
  }
  assert.ok(!out.argv[2].includes(d.dir), 'no path spliced into the text')
  assert.ok(Object.values(paramsOf(out.argv)).includes(d.ws))
  // The gate names a refusal itself (post-execute); DSH's own marker would
  // point the model at a wider sandbox mode.
  assert.deepEqual(out.denialSignatures, [])
  d.plan(['bash', '-c', 'ls'], d.policy)
  assert.equal(d.calls.length, 2, 'the profile is compiled on every call, from the rules as they are')
  assert.equal(d.calls[0].request.enforce, 'guarded', 'at the tier the probe found')
  assert.equal(d.calls[0].host, core.nodeHost)
  // Without a planner of our own the real runner is the fixed path.
  const fixed = makePlanner({ platform: 'macos', fence: { current: () => ({ level: 'guarded' }) }, compileProfile: core.compileProfile, host: core.nodeHost, profileFor: requests({ grants: d.grants, home: d.home, harnessHome: join(d.home, '.dsh'), store: d.store }) })
  assert.equal(fixed(['bash', '-c', 'ls'], d.policy).argv[0], '/usr/bin/sandbox-exec')
})

test('darwin confine: the one-shot grant is claimed by its command line, once, as on Linux', (t) => {
  const d = darwin(t)
  const build = join(d.ws, 'build')
  d.grants.hold('s1', 'call-a', 'rm -rf build')
  d.grants.bind('call-a', onceRules('call-a', [{ path: build, recursive: true, access: { delete: true } }], new Date().toISOString()))
  const other = d.plan(['bash', '-c', 'rm -rf build/'], d.policy)
  assert.deepEqual(allowsFor(other.argv, build), [], 'another command line gets nothing')
  const out = d.plan(['bash', '-c', 'rm -rf build'], d.policy)
  const allows = allowsFor(out.argv, build)
  assert.equal(allows.length, 1, out.argv[2])
  assert.match(allows[0], /^\(allow [a-z -]*file-write-unlink[a-z -]* \(subpath \(param "P\d+"\)\)\)$/)
  // The stand-in takes the argv as sandbox-exec would and runs the command.
  const ran = spawnSync(out.argv[0], out.argv.slice(1), { cwd: d.ws, encoding: 'utf8' })
  assert.equal(ran.status, 0, ran.stderr)
  assert.equal(existsSync(build), false)
  const [seen] = d.runs()
  assert.deepEqual(seen.argv, out.argv.slice(1))
  assert.deepEqual(seen.command, ['bash', '-c', 'rm -rf build'])
  const again = d.plan(['bash', '-c', 'rm -rf build'], d.policy)
  assert.deepEqual(allowsFor(again.argv, build), [], 'a second run of the same line gets nothing')
})

test('darwin confine: a symlinked root is granted under both spellings (nodeHost answers the real path)', (t) => {
  const d = darwin(t)
  const cellar = join(d.dir, 'Cellar', 'gh', '2.0', 'bin')
  mkdirSync(cellar, { recursive: true })
  writeFileSync(join(cellar, 'gh'), '#!/bin/sh\n')
  const brewBin = join(d.dir, 'brew-bin')
  mkdirSync(brewBin)
  symlinkSync(join(cellar, 'gh'), join(brewBin, 'gh'))
  const tools = join(d.dir, 'tools')
  symlinkSync(join(d.dir, 'Cellar'), tools)
  d.grants.hold('s1', 'call-b', 'gh --version')
  d.grants.bind('call-b', onceRules('call-b', [
    { path: join(brewBin, 'gh'), recursive: false, access: { read: true, execute: true } },
    { path: tools, recursive: true, access: { read: true } },
  ], new Date().toISOString()))
  const out = d.plan(['bash', '-c', 'gh --version'], d.policy)
  const values = Object.values(paramsOf(out.argv))
  for (const p of [join(brewBin, 'gh'), join(cellar, 'gh'), tools, join(d.dir, 'Cellar')]) assert.ok(values.includes(p), `${p} is a parameter`)
  const execLine = allowsFor(out.argv, join(brewBin, 'gh')).find((l) => l.includes('process-exec'))
  assert.ok(execLine && allowsFor(out.argv, join(cellar, 'gh')).includes(execLine), `one exec grant names the link and the binary it leads to:\n${out.argv[2]}`)
  const readLine = allowsFor(out.argv, tools)[0]
  assert.ok(readLine && allowsFor(out.argv, join(d.dir, 'Cellar')).includes(readLine))
})

test('darwin confine: read-only sessions get no write grant but the terminals', (t) => {
  const d = darwin(t)
  const out = d.plan(['bash', '-c', 'ls'], { ...d.policy, mode: 'read-only' })
  const params = paramsOf(out.argv)
  for (const line of out.argv[2].split('\n').filter((l) => l.startsWith('(allow') && l.includes('file-write'))) {
    const named = [...line.matchAll(/\(param "(P\d+)"\)/g)].map((m) => params[m[1]])
    assert.ok(named.every((p) => p.startsWith('/dev/')), `read-only wrote: ${line} (${named})`)
  }
})

/** DSH's reading of a run (sandbox helpers): a runner failure needs a nonzero
 * exit, the rule's exit codes if it names some, and a fatal signature on a line. */
function runnerFailure(code, stderr, rules) {
  if (code === null || code === 0) return undefined
  for (const rule of rules) {
    if (rule.allowedExitCodes !== undefined && !rule.allowedExitCodes.includes(code)) continue
    const line = stderr.split(/\r?\n/).find((l) => rule.fatalSignatures.some((s) => l.toLowerCase().includes(s.toLowerCase())))
    if (line !== undefined) return line
  }
  return undefined
}

test('darwin confine: a profile sandbox-exec refuses is a runner failure; a Seatbelt EPERM is named by the guidance', (t) => {
  const d = darwin(t, { outcomes: { guarded: 'refuse' } })
  const out = d.plan(['bash', '-c', 'echo hi'], d.policy)
  const refused = spawnSync(out.argv[0], out.argv.slice(1), { cwd: d.ws, encoding: 'utf8' })
  assert.notEqual(refused.status, 0)
  assert.ok(refused.stdout === '', 'nothing ran')
  assert.match(runnerFailure(refused.status, refused.stderr, out.runnerFailureRules), /^sandbox-exec: invalid data type/)

  const e = darwin(t)
  const run = e.plan(['bash', '-c', "echo 'rm: build/out.o: Operation not permitted' >&2; exit 1"], e.policy)
  const failed = spawnSync(run.argv[0], run.argv.slice(1), { cwd: e.ws, encoding: 'utf8' })
  assert.equal(failed.status, 1)
  assert.equal(runnerFailure(failed.status, failed.stderr, run.runnerFailureRules), undefined, 'the command failed, not the runner')
  assert.deepEqual(run.denialSignatures, [], 'DSH marks nothing: the gate reads the refusal')
  // The same line feeds the guidance: which capability, where, and the narrowest /allow add.
  const [guide] = core.explainDenials(failed.stderr, e.ws, e.home)
  assert.equal(guide.capability, 'delete')
  assert.equal(guide.path, join(e.ws, 'build', 'out.o'))
  assert.ok(guide.guidance.includes(`/allow add delete ${join(e.ws, 'build')} folder`), guide.guidance)
  assert.equal(SEATBELT_FAILURE_PREFIX, 'sandbox-exec: ')
})

test('darwin confine: a compile failure is thrown, never replaced by a wider profile or the host provider', (t) => {
  const d = darwin(t)
  const broken = makePlanner({
    platform: 'macos', fence: { current: () => ({ level: 'guarded' }) }, host: core.nodeHost, sandboxExec: d.standin,
    compileProfile: core.compileProfile,
    profileFor: (policy, command, enforce) => ({ workspace: policy.workspaceRoot, home: d.home, harnessHome: d.home, platform: 'macos', mode: 'sideways', enforce }),
  })
  assert.throws(() => broken(['bash', '-c', 'ls'], d.policy), /mode|variant/)
  const missing = makePlanner({ platform: 'macos', fence: { current: () => ({ level: 'guarded' }) }, profileFor: () => ({}) })
  assert.throws(() => missing(['bash', '-c', 'ls'], d.policy), /no compileProfile; nothing ran/)
  assert.deepEqual(d.runs(), [])
})
