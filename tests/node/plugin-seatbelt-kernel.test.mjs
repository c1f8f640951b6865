// The plugin's Seatbelt path against the real kernel (macOS only): the probe
// the plugin runs at start-up, then confine's argv run as DSH would run it.
// Elsewhere every test SKIPs with its reason; with DSH_ALLOW_REQUIRE_SEATBELT=1
// (CI's macOS job) a SKIP is a failure instead.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Fence, SANDBOX_EXEC } from '../../plugin/fence.js'
import { makePlanner } from '../../plugin/confine.js'
import { GrantStore, onceRules } from '../../plugin/grants.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const core = await import(join(ROOT, 'pkg', 'core', 'index.js'))
const ALL = ['read', 'write', 'create', 'delete', 'execute']
const SECRET = 'dsh-allow-seatbelt-secret'

/** Why the suite cannot run here, or undefined. */
function unavailable() {
  if (process.platform !== 'darwin') return `Seatbelt runs only on macOS (${SANDBOX_EXEC}); this is ${process.platform}`
  const r = spawnSync(SANDBOX_EXEC, ['-p', '(version 1)\n(allow default)', '/usr/bin/true'])
  if (r.status !== 0) return `sandbox-exec cannot apply a profile here (inside another sandbox?): ${r.stderr}`
  return undefined
}

function seatbelt(t) {
  const why = unavailable()
  if (why === undefined) return true
  assert.ok(process.env.DSH_ALLOW_REQUIRE_SEATBELT !== '1', `DSH_ALLOW_REQUIRE_SEATBELT=1 but ${why}`)
  t.skip(why)
  return false
}

/** A world under $HOME (the temp folders are open to all five; /Users is read-fenced). */
function world(t) {
  const parent = join(homedir(), '.dsh-allow-seatbelt')
  mkdirSync(parent, { recursive: true })
  const root = realpathSync(mkdtempSync(join(parent, 'plugin-')))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const p = (...s) => join(root, ...s)
  for (const d of ['ws/build', 'home/.ssh', 'home/.dsh']) mkdirSync(p(d), { recursive: true })
  writeFileSync(p('ws', 'build', 'out.o'), 'x')
  writeFileSync(p('home', '.ssh', 'id_ed25519'), SECRET)
  writeFileSync(p('home', '.dsh', 'dsh-allow.json'), '{}')
  return { root, p }
}

/** `/allow add read,execute` for python3's install and the developer dir its shim execs into. */
function toolchainRules() {
  const roots = new Set()
  for (const name of ['python3']) {
    const found = spawnSync('/bin/sh', ['-c', `command -v ${name}`], { encoding: 'utf8', env: { ...process.env, PATH: `/bin:/usr/bin:${process.env.PATH}` } }).stdout.trim()
    if (found) roots.add(dirname(dirname(realpathSync(found))))
  }
  try {
    roots.add(execFileSync('/usr/bin/xcode-select', ['-p'], { encoding: 'utf8' }).trim())
  } catch {}
  roots.delete('/')
  roots.delete('')
  return [...roots].map((path) => ({ path, recursive: true, access: { read: true, execute: true } }))
}

test('the plugin probe on macOS: auto takes the strongest tier Seatbelt holds, with all five capabilities', async (t) => {
  if (!seatbelt(t)) return
  const w = world(t)
  const fence = new Fence({ platform: 'macos', enforce: 'auto', scratchParent: w.p('dsh'), seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost } })
  const status = await fence.ready()
  t.diagnostic(`probed: ${status.level}${status.reason ? ` (${status.reason})` : ''}`)
  // The spec: /bin/sh aborts under full on macOS, so auto lands on guarded.
  assert.ok(['guarded', 'full'].includes(status.level), JSON.stringify(status))
  assert.deepEqual(status.capabilities, ALL)
  for (const cap of ALL) assert.equal(status.fenced[cap], true, `${cap}: ${status.why[cap]}`)
  if (status.level === 'guarded') assert.match(status.declined.full, /full/)
})

test('a named tier Seatbelt cannot hold is reported off, never weakened', async (t) => {
  if (!seatbelt(t)) return
  const w = world(t)
  const full = await new Fence({ platform: 'macos', enforce: 'full', scratchParent: w.p('dsh'), seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost } }).ready()
  assert.ok(full.level === 'full' || (full.level === 'off' && /enforce: full is required/.test(full.reason)), JSON.stringify(full))
  const process_ = await new Fence({ platform: 'macos', enforce: 'process', scratchParent: w.p('dsh'), seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost } }).ready()
  assert.equal(process_.level, 'process')
})

test('confine on macOS: the kernel refuses what the rules do not grant, the one-shot grant opens its call only', async (t) => {
  if (!seatbelt(t)) return
  const w = world(t)
  const fence = new Fence({ platform: 'macos', enforce: 'auto', scratchParent: w.p('dsh'), seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost } })
  await fence.ready()
  const grants = new GrantStore({ ttlMs: 60_000 })
  t.after(() => grants.clear())
  const rules = toolchainRules()
  const plan = makePlanner({
    platform: 'macos', fence, compileProfile: core.compileProfile, host: core.nodeHost,
    profileFor: (policy, command, enforce) => {
      const once = command !== undefined ? grants.claim(policy.sessionId, command) : []
      return {
        workspace: policy.workspaceRoot, home: w.p('home'), harnessHome: w.p('home', '.dsh'), platform: 'macos', mode: policy.mode,
        rules, grants: once, protectedFiles: [w.p('home', '.dsh', 'dsh-allow.json')], enforce,
      }
    },
  })
  const policy = { mode: 'workspace-write', workspaceRoot: w.p('ws'), sessionId: 's1' }
  const run = (command) => {
    const out = plan(['bash', '-c', command], policy)
    assert.equal(out.argv[0], '/usr/bin/sandbox-exec')
    // sandbox-exec finds `bash` on PATH inside the sandbox: /bin's first (a
    // Homebrew bash would need execute granted on /opt/homebrew, see README).
    const env = { ...process.env, HOME: w.p('home'), PATH: `/bin:/usr/bin:${process.env.PATH}` }
    const r = spawnSync(out.argv[0], out.argv.slice(1), { cwd: w.p('ws'), encoding: 'utf8', env })
    return { ...r, out }
  }
  const key = w.p('home', '.ssh', 'id_ed25519')

  const cat = run(`cat '${key}'`)
  assert.notEqual(cat.status, 0)
  assert.ok(!cat.stdout.includes(SECRET))
  assert.ok(cat.out.denialSignatures.some((s) => cat.stderr.toLowerCase().includes(s)), cat.stderr)
  const [guide] = core.explainDenials(cat.stderr, w.p('ws'), w.p('home'))
  assert.equal(guide?.path, key, cat.stderr)
  assert.equal(guide.capability, 'read')

  const py = run(`python3 -c 'print(open("${key}").read())'`)
  assert.notEqual(py.status, 0, py.stdout + py.stderr)
  assert.ok(!py.stdout.includes(SECRET))

  assert.equal(run('echo x > out.md').status, 0)
  assert.equal(readFileSync(w.p('ws', 'out.md'), 'utf8'), 'x\n')
  assert.notEqual(run(`echo x > '${w.p('home', '.dsh', 'dsh-allow.json')}'`).status, 0)
  assert.equal(readFileSync(w.p('home', '.dsh', 'dsh-allow.json'), 'utf8'), '{}')

  assert.notEqual(run('rm -rf build').status, 0)
  assert.ok(existsSync(w.p('ws', 'build')))
  grants.hold('s1', 'call-a', 'rm -rf build')
  grants.bind('call-a', onceRules('call-a', [{ path: w.p('ws', 'build'), recursive: true, access: { delete: true } }], new Date().toISOString()))
  const removed = run('rm -rf build')
  assert.equal(removed.status, 0, removed.stderr)
  assert.ok(!existsSync(w.p('ws', 'build')), 'the granted removal of the folder itself goes through on Seatbelt')
  mkdirSync(w.p('ws', 'build'))
  assert.notEqual(run('rm -rf build').status, 0, 'the grant was claimed once')
})
