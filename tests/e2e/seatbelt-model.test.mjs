// dsh-allow on its macOS path inside a real DSH 0.1.0-rc.8 session, under
// the Seatbelt model (tests/seatbelt_model: SBPL evaluated with Seatbelt's
// semantics, enforced on the real process tree by seccomp user
// notification; not Apple's kernel). The plugin runs with testPlatform:
// macos and sandboxExec: the model; DSH's own provider is put on its macOS
// path with the model as its sandbox-exec (plugins/seatbelt-model-provider.js).
// The model's log (DSH_ALLOW_SEATBELT_MODEL_LOG) counts the profiles each
// call went through.
//
// Runs when DSH_ALLOW_SEATBELT_MODEL names the built model (Linux); SKIPs
// otherwise, and fails instead with DSH_ALLOW_REQUIRE_SEATBELT=1.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, results, runDsh, testOutput } from './harness.mjs'

const LABEL = 'Seatbelt model'
const MODEL = process.env.DSH_ALLOW_SEATBELT_MODEL

function unavailable() {
  if (process.platform !== 'linux') return `the ${LABEL} runs on Linux only`
  if (!MODEL) return `DSH_ALLOW_SEATBELT_MODEL is not set (the ${LABEL}, tests/seatbelt_model)`
  try {
    if (!statSync(MODEL).isFile()) return `DSH_ALLOW_SEATBELT_MODEL=${MODEL} is not a file`
  } catch {
    return `DSH_ALLOW_SEATBELT_MODEL=${MODEL} is not a file`
  }
  return missingPrerequisite()
}
const why = unavailable()
if (why !== undefined) {
  // One test that says why (a skipped describe counts no test in the summary).
  if (process.env.DSH_ALLOW_REQUIRE_SEATBELT === '1') test(`${LABEL}: dsh-allow in a real DSH session`, () => assert.fail(`DSH_ALLOW_REQUIRE_SEATBELT=1 but ${why}`))
  else test(`${LABEL}: dsh-allow in a real DSH session`, { skip: why }, () => {})
}

const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })

/**
 * The model as the session's sandbox-exec, with its log. DSH runs a tool
 * call with an environment of its own, where DSH_ALLOW_SEATBELT_MODEL_LOG
 * does not reach: a two-line script names the log and execs the model.
 */
function loggedModel() {
  const dir = mkdtempSync(join(testOutput(), 'seatbelt-model-'))
  const program = join(dir, 'sandbox-exec')
  const log = join(dir, 'model.log')
  writeFileSync(log, '')
  writeFileSync(program, `#!/bin/sh\nDSH_ALLOW_SEATBELT_MODEL_LOG='${log}' exec '${MODEL}' "$@"\n`)
  chmodSync(program, 0o755)
  return { dir, program, log, offset: () => statSync(log).size }
}

/** The model's log lines from byte `from` on, by kind. */
function modelLog(file, from = 0) {
  const text = readFileSync(file).subarray(from).toString('utf8')
  const lines = text.split('\n').filter(Boolean)
  const of = (kind) => lines.filter((l) => l.startsWith(`${kind} `))
  return { lines, apply: of('apply'), nested: of('nested'), deny: of('deny') }
}

/** A world whose plugin takes the macOS path with the model as its sandbox-exec. */
function modelWorld(label, sandbox, extra = {}, base = undefined) {
  return makeWorld(label, { allowConfig: { testPlatform: 'macos', sandboxExec: sandbox.program, ...extra }, base })
}

/**
 * Where a Mac keeps a user's files: a real /Users here (as the kernel suite
 * does), so the guarded tier's read fence covers the world's home and
 * $DSH_HOME, and the probe can confirm it. Removed again when empty.
 */
const MAC_USERS = '/Users/dsh-allow-model/e2e'
function dropMacUsers() {
  for (const dir of [MAC_USERS, '/Users/dsh-allow-model', '/Users']) {
    try { rmdirSync(dir) } catch { break }
  }
}

/** Run DSH with DSH's own provider on the macOS path under the model too; `model` is this run's log. */
async function runOnModel(world, sandbox, options) {
  const from = sandbox.offset()
  const run = await runDsh(world, {
    ...options,
    plugins: [{ id: 'e2e-seatbelt-model-provider', file: 'seatbelt-model-provider.js', config: { sandboxExec: sandbox.program } }],
  })
  return { ...run, model: modelLog(sandbox.log, from) }
}

/** What `/allow status` said in the run (the scripted human typed it). */
function statusOf(run) {
  const said = run.answerer.find((r) => r.kind === 'command' && r.line === '/allow status')
  return said?.result?.text ?? JSON.stringify(said)
}

const text = (run) => JSON.stringify(results(run), null, 1) + run.stderr

describe(`${LABEL}: dsh-allow on its macOS path in a real DSH session`, { skip: why }, () => {
  describe('the fence is ours (enforce: auto)', () => {
    let world
    let sandbox
    before(() => { sandbox = loggedModel(); world = modelWorld('seatbelt-ours', sandbox) })
    after(() => { cleanup(world); rmSync(sandbox.dir, { recursive: true, force: true }) })

    test(`${LABEL}: each call goes through exactly one Seatbelt profile, ours; hidden code writing outside the workspace is refused, a permitted call runs`, async (t) => {
      const outside = join(world.home, 'made-by-python')
      const started = Date.now()
      const run = await runOnModel(world, sandbox, {
        script: [
          bash('echo x > out.md'),
          bash(`python3 -c 'open("${outside}", "w").write("x")'`),
        ],
        commands: ['/allow status'],
        // Hidden code asks below full/guarded: let it run, the kernel has the last word.
        answers: ['once'],
      })
      t.diagnostic(`${LABEL}: session took ${Date.now() - started} ms`)
      const status = statusOf(run)
      for (const line of status.split('\n')) t.diagnostic(`${LABEL}: /allow status: ${line}`)
      const r = results(run)
      assert.equal(r.length, 2, text(run))

      // Which fence: ours, at the tier the probe confirmed on the model (see
      // the kernel suite: no /private, no /Users), so a call's enforcement is partial.
      assert.match(status, /^Kernel fence: process \(enforce: auto; runner: .*sandbox-exec\)$/m, status)
      assert.equal(r[0].value?.sandbox?.enforcement, 'partial', text(run))
      // The permitted call ran.
      assert.equal(r[0].isError, false, text(run))
      assert.equal(readFileSync(join(world.ws, 'out.md'), 'utf8'), 'x\n')
      // Hidden code: asked (inline code runs unasked only at full or guarded), ran, refused by the kernel.
      assert.deepEqual(approvals(run).map((a) => a.pending?.command), [`python3 -c 'open("${outside}", "w").write("x")'`])
      assert.match(r[1].text, /Operation not permitted/, text(run))
      assert.equal(existsSync(outside), false, 'the file outside the workspace was not made')
      assert.ok(run.model.deny.some((l) => l.startsWith(`deny file-write-create ${outside} `)), run.model.lines.join('\n'))

      // The model's account: the probe's /bin/sh runs, then one profile per call, none nested.
      const calls = run.model.apply.filter((l) => / bash$/.test(l))
      for (const line of run.model.apply.concat(run.model.nested)) t.diagnostic(`${LABEL}: log: ${line}`)
      assert.equal(calls.length, 2, run.model.lines.join('\n'))
      assert.equal(run.model.nested.length, 0, run.model.lines.join('\n'))
      assert.ok(run.model.apply.every((l) => / (bash|\/bin\/sh)$/.test(l)), run.model.apply.join('\n'))
    })
  })

  describe('the fence is off, DSH\'s own provider confines (enforce: full, which the model cannot prove)', () => {
    let world
    let sandbox
    before(() => { sandbox = loggedModel(); world = modelWorld('seatbelt-dsh', sandbox, { enforce: 'full' }) })
    after(() => { cleanup(world); rmSync(sandbox.dir, { recursive: true, force: true }) })

    test(`${LABEL}: each call goes through exactly one Seatbelt profile, DSH's own; a write outside the workspace is refused`, async (t) => {
      const outside = join(world.home, 'made-by-python')
      const run = await runOnModel(world, sandbox, {
        script: [
          bash('echo x > out.md'),
          bash(`python3 -c 'open("${outside}", "w").write("x")'`),
        ],
        commands: ['/allow status'],
        answers: ['once'],
      })
      const status = statusOf(run)
      assert.match(status, /^Kernel fence: off \(enforce: full; /m, status)
      assert.match(status, /^Why: enforce: full is required but the kernel probe reached guarded/m, status)
      const r = results(run)
      assert.equal(r.length, 2, text(run))
      assert.equal(r[0].isError, false, text(run))
      // DSH's provider: its Seatbelt rung claims full enforcement, ours would say partial.
      assert.equal(r[0].value?.sandbox?.enforcement, 'full', text(run))
      assert.equal(readFileSync(join(world.ws, 'out.md'), 'utf8'), 'x\n')
      assert.match(r[1].text, /Operation not permitted/, text(run))
      assert.equal(existsSync(outside), false)
      // DSH's profile: (allow default) (deny file-write*) and its writable roots.
      assert.ok(run.model.deny.some((l) => l.startsWith(`deny file-write-create ${outside} `)), run.model.lines.join('\n'))
      const calls = run.model.apply.filter((l) => / bash$/.test(l))
      for (const line of run.model.apply.concat(run.model.nested)) t.diagnostic(`${LABEL}: log: ${line}`)
      assert.equal(calls.length, 2, run.model.lines.join('\n'))
      assert.equal(run.model.nested.length, 0, run.model.lines.join('\n'))
    })
  })

  describe('the world where a Mac keeps it, under /Users: the tier macOS users get', () => {
    let world
    let sandbox
    before(() => { sandbox = loggedModel(); world = modelWorld('seatbelt-users', sandbox, {}, MAC_USERS) })
    after(() => { cleanup(world); rmSync(sandbox.dir, { recursive: true, force: true }); dropMacUsers() })

    test(`${LABEL}: auto lands on guarded; hidden code reading a key in home is refused by the fence, a read in the workspace runs`, async (t) => {
      const key = join(world.home, '.ssh', 'id_ed25519')
      const run = await runOnModel(world, sandbox, {
        script: [
          bash('cat README.md'),
          bash(`python3 -c 'print(open("${key}").read())'`),
        ],
        commands: ['/allow status'],
        answers: ['once'],
      })
      const status = statusOf(run)
      for (const line of status.split('\n').filter((l) => /^(Kernel fence|Why|Declined)/.test(l))) t.diagnostic(`${LABEL}: /allow status: ${line}`)
      assert.match(status, /^Kernel fence: guarded \(enforce: auto; /m, status)
      const r = results(run)
      assert.equal(r.length, 2, text(run))
      assert.equal(r[0].isError, false, text(run))
      assert.match(r[0].text, /# fixture workspace/, text(run))
      // Whether or not a card was shown, the kernel has the last word: no key.
      assert.doesNotMatch(JSON.stringify(results(run)), /fixture\n-----END/, 'the key was printed')
      assert.match(r[1].text, /Operation not permitted/, text(run))
      assert.ok(run.model.deny.some((l) => l.startsWith(`deny file-read-data ${key} `)), run.model.lines.join('\n'))
      assert.equal(run.model.nested.length, 0, run.model.lines.join('\n'))
    })
  })

  describe('DSH itself runs under a Seatbelt profile with a deny', () => {
    let world
    let sandbox
    before(() => { sandbox = loggedModel(); world = modelWorld('seatbelt-nested', sandbox) })
    after(() => { cleanup(world); rmSync(sandbox.dir, { recursive: true, force: true }) })

    test(`${LABEL}: /allow status reports the fence unavailable, Seatbelt cannot nest; a call does not run`, async (t) => {
      const outer = `(version 1)\n(allow default)\n(deny file-write* (subpath "${join(world.root, 'nowhere')}"))`
      const run = await runOnModel(world, sandbox, {
        wrap: [sandbox.program, '-p', outer],
        script: [bash('echo x > nested.md')],
        commands: ['/allow status'],
      })
      const status = statusOf(run)
      for (const line of status.split('\n').filter((l) => /^(Kernel fence|Why):/.test(l))) t.diagnostic(`${LABEL}: /allow status: ${line}`)
      assert.match(status, /^Kernel fence: off \(enforce: auto; /m, status)
      assert.match(status, /^Why: DSH itself already runs under a Seatbelt profile, and Seatbelt cannot nest \(sandbox-exec: sandbox_apply: Operation not permitted\)$/m, status)
      // With our fence off the call goes to DSH's own Seatbelt profile, which cannot nest either: nothing ran.
      const [r] = results(run)
      assert.equal(r?.isError, true, text(run))
      assert.equal(existsSync(join(world.ws, 'nested.md')), false)
      assert.match(r.text, /sandbox-exec: sandbox_apply: Operation not permitted/, text(run))
      const model = run.model
      for (const line of model.apply.concat(model.nested)) t.diagnostic(`${LABEL}: log: ${line}`)
      // One profile applied, DSH's own process's; the probe's and the call's refused.
      assert.match(model.apply[0] ?? '', / \S*dsh$/, model.lines.join('\n'))
      assert.equal(model.apply.length, 1, model.lines.join('\n'))
      assert.ok(model.nested.length >= 2, `the probe's and the call's sandbox-exec refused:\n${model.lines.join('\n')}`)
    })
  })
})

describe('the test hooks fail closed: a bad value stops DSH before anything runs', { skip: missingPrerequisite() }, () => {
  const cases = [
    [{ testPlatform: 'windows' }, /dsh-allow \(dsh-allow\): invalid config/],
    [{ testPlatform: 'macos', sandboxExec: 'relative/sandbox-exec' }, /dsh-allow \(dsh-allow\): invalid config/],
    [{ sandboxExec: '/usr/bin/true' }, /sandboxExec \(\/usr\/bin\/true\) is a test hook for the macOS path and needs testPlatform: macos/],
  ]
  for (const [config, said] of cases) {
    test(`config ${JSON.stringify(config)}: DSH does not start, no call runs`, async () => {
      const world = makeWorld('seatbelt-config', { allowConfig: config })
      try {
        const run = await runDsh(world, { script: [bash('echo x > out.md')] })
        assert.notEqual(run.code, 0)
        assert.match(run.stderr, said, run.stderr)
        assert.deepEqual(results(run), [])
        assert.equal(existsSync(join(world.ws, 'out.md')), false)
      } finally {
        cleanup(world)
      }
    })
  }
})
