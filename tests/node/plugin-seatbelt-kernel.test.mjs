// The plugin's Seatbelt path against a real Seatbelt: the probe the plugin
// runs at start-up, then confine's argv run as DSH would run it, and the
// probe from inside a process that already runs under a profile.
//
// Where: on macOS Apple's /usr/bin/sandbox-exec; on Linux the Seatbelt
// model (tests/seatbelt_model, named by DSH_ALLOW_SEATBELT_MODEL), a test
// instrument that evaluates the profile with Seatbelt's semantics and
// enforces it on the real process tree by seccomp user notification — every
// test name and line says which, never Apple's kernel for the model.
// Elsewhere every test SKIPs with its reason; with DSH_ALLOW_REQUIRE_SEATBELT=1
// (CI's macOS job, and test.sh with the model) a SKIP is a failure instead.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Fence, SANDBOX_EXEC, SEATBELT_NESTED_REASON } from '../../plugin/fence.js'
import { makePlanner } from '../../plugin/confine.js'
import { GrantStore, onceRules } from '../../plugin/grants.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PKG = process.env.DSH_ALLOW_PKG ?? join(ROOT, 'pkg')
const core = await import(join(PKG, 'core', 'index.js'))
const ALL = ['read', 'write', 'create', 'delete', 'execute']
const SECRET = 'dsh-allow-seatbelt-secret'

/**
 * What runs the suite here: `{ program, label, model }`, or `{ why }` when
 * nothing can. A DSH_ALLOW_SEATBELT_MODEL that names no file is a broken
 * set-up, never a reason to skip.
 */
function seatbeltHere() {
  if (process.platform === 'darwin') return { program: SANDBOX_EXEC, label: "Seatbelt (Apple's kernel)", model: false }
  const named = process.env.DSH_ALLOW_SEATBELT_MODEL
  if (process.platform !== 'linux') return { why: `Seatbelt runs on macOS (${SANDBOX_EXEC}) and its model on Linux; this is ${process.platform}` }
  if (!named) return { why: `Seatbelt runs only on macOS (${SANDBOX_EXEC}); on Linux set DSH_ALLOW_SEATBELT_MODEL to the Seatbelt model (tests/seatbelt_model)` }
  let file = false
  try {
    file = statSync(named).isFile()
  } catch {}
  if (!file) return { broken: `DSH_ALLOW_SEATBELT_MODEL=${named} is not a file (build tests/seatbelt_model)` }
  return { program: named, label: 'Seatbelt model (seccomp user notification; not Apple\'s kernel)', model: true }
}

const HERE = seatbeltHere()
/** The label every test name carries. */
const LABEL = HERE.label ?? 'Seatbelt'
const SANDBOX = HERE.program

/** Why the suite cannot run here, or undefined. */
function unavailable() {
  if (HERE.broken) return HERE.broken
  if (HERE.why) return HERE.why
  const r = spawnSync(SANDBOX, ['-p', '(version 1)\n(allow default)', '/usr/bin/true'], { encoding: 'utf8' })
  if (r.status !== 0) return `${SANDBOX} cannot apply a profile here (inside another sandbox?): ${r.error?.message ?? r.stderr}`
  return undefined
}

function seatbelt(t) {
  const why = unavailable()
  if (why === undefined) {
    t.diagnostic(`runs under ${LABEL}: ${SANDBOX}`)
    return true
  }
  assert.ok(process.env.DSH_ALLOW_REQUIRE_SEATBELT !== '1' && !HERE.broken, `${HERE.broken ? '' : 'DSH_ALLOW_REQUIRE_SEATBELT=1 but '}${why}`)
  t.skip(why)
  return false
}

/** The Fence the plugin makes on the macOS path (testPlatform: macos + sandboxExec off a Mac). */
function macosFence(enforce, scratchParent) {
  return new Fence({
    platform: 'macos', enforce, scratchParent,
    seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: SANDBOX },
  })
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

test(`${LABEL}: the plugin probe (auto) takes the strongest tier whose own profile it confirms`, async (t) => {
  if (!seatbelt(t)) return
  const w = world(t)
  const status = await macosFence('auto', w.p('dsh')).ready()
  t.diagnostic(`${LABEL}: probed ${status.level}${status.reason ? ` (${status.reason})` : ''}`)
  if (!HERE.model) {
    // The spec: /bin/sh aborts under full on macOS, so auto lands on guarded.
    assert.ok(['guarded', 'full'].includes(status.level), JSON.stringify(status))
    assert.deepEqual(status.capabilities, ALL)
    for (const cap of ALL) assert.equal(status.fenced[cap], true, `${cap}: ${status.why[cap]}`)
    if (status.level === 'guarded') assert.match(status.declined.full, /full/)
    return
  }
  // The model on Linux: /bin/sh lives under the full profile (its libraries
  // are in /usr/lib, which the macOS baseline opens), but /private, where
  // the probe tries a read outside the user data areas, does not exist; and
  // guarded fences reads only in /Users and /Volumes, which Linux has not:
  // its probe's read under $HOME runs. So auto lands on process.
  assert.equal(status.level, 'process', JSON.stringify(status))
  assert.deepEqual(status.capabilities, ['write', 'create', 'delete', 'execute'])
  for (const cap of ['write', 'create', 'delete', 'execute']) assert.equal(status.fenced[cap], true, `${cap}: ${status.why[cap]}`)
  assert.equal(status.fenced.read, false)
  assert.match(status.declined.full, /reached guarded: \/private does not exist here/)
  assert.match(status.declined.guarded, /reached process \(read ran unhindered\)/)
  assert.equal(status.persistence.state, 'shut', status.persistence.why)
  assert.equal(status.metadata.state, 'fenced', status.metadata.why)
})

test(`${LABEL}: a named tier Seatbelt cannot hold is reported off, never weakened`, async (t) => {
  if (!seatbelt(t)) return
  const w = world(t)
  const full = await macosFence('full', w.p('dsh')).ready()
  assert.ok(full.level === 'full' || (full.level === 'off' && /enforce: full is required/.test(full.reason)), JSON.stringify(full))
  if (HERE.model) assert.equal(full.level, 'off', 'the model cannot prove full (no /private)')
  const guarded = await macosFence('guarded', w.p('dsh')).ready()
  if (HERE.model) assert.match(guarded.reason ?? '', /enforce: guarded is required but the kernel probe reached process/, JSON.stringify(guarded))
  const process_ = await macosFence('process', w.p('dsh')).ready()
  assert.equal(process_.level, 'process', JSON.stringify(process_))
})

test(`${LABEL}: confine on the macOS path: the kernel refuses what the rules do not grant, the one-shot grant opens its call only`, async (t) => {
  if (!seatbelt(t)) return
  const w = world(t)
  const fence = macosFence('auto', w.p('dsh'))
  assert.notEqual((await fence.ready()).level, 'off', JSON.stringify(fence.current()))
  const grants = new GrantStore({ ttlMs: 60_000 })
  t.after(() => grants.clear())
  const rules = toolchainRules()
  const plan = makePlanner({
    platform: 'macos', fence, compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: SANDBOX,
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
    assert.equal(out.argv[0], SANDBOX)
    // sandbox-exec finds `bash` on PATH inside the sandbox: /bin's first (a
    // Homebrew bash would need execute granted on /opt/homebrew, see docs/fence.md).
    const env = { ...process.env, HOME: w.p('home'), PATH: `/bin:/usr/bin:${process.env.PATH}` }
    const r = spawnSync(out.argv[0], out.argv.slice(1), { cwd: w.p('ws'), encoding: 'utf8', env })
    return { ...r, out }
  }
  const key = w.p('home', '.ssh', 'id_ed25519')

  // Reads are the kernel's only at guarded and full (the model lands on
  // process: see the probe test); the gate refuses this cat either way.
  if (fence.current().fenced.read) {
    const cat = run(`cat '${key}'`)
    assert.notEqual(cat.status, 0)
    assert.ok(!cat.stdout.includes(SECRET))
    assert.deepEqual(cat.out.denialSignatures, [], 'the gate names the refusal itself, not DSH')
    const [guide] = core.explainDenials(cat.stderr, w.p('ws'), w.p('home'))
    assert.equal(guide?.path, key, cat.stderr)
    assert.equal(guide.capability, 'read')

    const py = run(`python3 -c 'print(open("${key}").read())'`)
    assert.notEqual(py.status, 0, py.stdout + py.stderr)
    assert.ok(!py.stdout.includes(SECRET))
  } else {
    t.diagnostic(`${LABEL}: reads are not fenced at ${fence.current().level}; the read checks are the gate's here`)
  }

  // Hidden code writing outside the workspace: refused by the kernel, with EPERM.
  const outside = w.p('home', 'made-by-python')
  const pyWrite = run(`python3 -c 'open("${outside}", "w").write("x")'`)
  assert.notEqual(pyWrite.status, 0, pyWrite.stdout + pyWrite.stderr)
  assert.match(pyWrite.stderr, /Operation not permitted/, pyWrite.stderr)
  assert.ok(!existsSync(outside))

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

test(`${LABEL}: the probe from inside a process already under a profile with a deny reports the fence off, Seatbelt cannot nest`, async (t) => {
  if (!seatbelt(t)) return
  const w = world(t)
  const log = w.p('model.log')
  // node itself under a profile that denies something (nothing it needs).
  const outer = `(version 1)\n(allow default)\n(deny file-write* (subpath "${w.p('nowhere')}"))`
  const script = `
    const { Fence } = await import(${JSON.stringify(new URL('../../plugin/fence.js', import.meta.url).href)})
    const core = await import(${JSON.stringify(pathToFileURL(join(PKG, 'core', 'index.js')).href)})
    const fence = new Fence({ platform: 'macos', enforce: 'auto', scratchParent: ${JSON.stringify(w.p('dsh'))},
      seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec: ${JSON.stringify(SANDBOX)} } })
    process.stdout.write(JSON.stringify(await fence.ready()))
  `
  const r = spawnSync(SANDBOX, ['-p', outer, process.execPath, '--input-type=module', '-e', script], {
    cwd: w.root, encoding: 'utf8', env: { ...process.env, DSH_ALLOW_SEATBELT_MODEL_LOG: log },
  })
  assert.equal(r.status, 0, `node under the outer profile: ${r.stderr}`)
  const status = JSON.parse(r.stdout)
  t.diagnostic(`${LABEL}: nested probe: ${status.level} (${status.reason})`)
  assert.equal(status.level, 'off', r.stdout)
  assert.equal(status.nested, true, r.stdout)
  assert.equal(status.reason, SEATBELT_NESTED_REASON)
  assert.deepEqual(status.capabilities, [])
  if (HERE.model) {
    // The model's own account: node's profile applied, the probe's refused, nothing else tried.
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean)
    assert.equal(lines.filter((l) => l.startsWith('apply ')).length, 1, lines.join('\n'))
    assert.equal(lines.filter((l) => l.startsWith('nested ')).length, 1, lines.join('\n'))
  }
})
