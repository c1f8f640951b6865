// The audit ledger in a real (headless) DSH process: what the ledger holds
// after real calls, folded by the core; no secret reaches it; `audit: false`
// writes nothing; and after an approved `rm -rf build` the folder is gone,
// removed by the runner within the call, the chain after it running.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, makeWorld, missingPrerequisite, PKG, results, runDsh, runnerWorks } from './harness.mjs'

const missing = missingPrerequisite()
const kernel = missing === undefined && runnerWorks()
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })

describe('the audit ledger in a real DSH process', { skip: missing }, () => {
  let world
  let core
  before(async () => {
    world = makeWorld('ledger')
    core = await import(join(PKG, 'core', 'index.js'))
  })
  after(() => cleanup(world))

  test('one line per decision and per answer, folded into one row per call with who decided it; secrets redacted', async () => {
    mkdirSync(join(world.ws, 'build', 'obj'), { recursive: true })
    writeFileSync(join(world.ws, 'build', 'obj', 'main.o'), 'x')
    const run = await runDsh(world, {
      script: [
        bash('cat README.md'),
        bash('rm -rf build'),
        bash('echo password=hunter2 > /dev/null'),
        bash('cat ~/.ssh/id_ed25519'),
      ],
      answers: ['once'],
    })
    const r = results(run)
    assert.equal(r.length, 4, run.stdout + run.stderr)
    const file = join(world.dshHome, 'dsh-allow-audit.ndjson')
    const text = readFileSync(file, 'utf8')
    assert.ok(!text.includes('hunter2'), 'the secret never reaches the ledger')
    const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    assert.ok(lines.every((l) => l.dshAllow === 1 && typeof l.sessionId === 'string' && typeof l.callId === 'string'))
    assert.deepEqual(lines.map((l) => l.kind), ['decision', 'decision', 'answer', 'decision', 'decision'])

    const sessionId = lines[0].sessionId
    const { rows, hiddenBaseline } = core.foldLedger(text, { sessionId })
    assert.equal(hiddenBaseline, 2)
    assert.deepEqual(rows.map((x) => [x.command, x.source, x.outcome, x.action ?? null]), [
      ['rm -rf build', 'human', 'allowed', 'allow-once'],
      ['cat ~/.ssh/id_ed25519', 'policy', 'refused', null],
    ])
    assert.deepEqual(rows[0].missing, [{ path: join(world.ws, 'build'), capability: 'delete' }])
    const all = core.foldLedger(text, { sessionId, baseline: true }).rows
    assert.deepEqual(all.map((x) => x.command), ['cat README.md', 'rm -rf build', 'echo password=[REDACTED] > /dev/null', 'cat ~/.ssh/id_ed25519'])
  })

  test('after Allow once, rm -rf build && echo after runs to the end: the runner removes the granted folder itself, nothing is repaired afterwards', { skip: !kernel && 'the Landlock runner does not work here' }, async () => {
    mkdirSync(join(world.ws, 'build', 'obj'), { recursive: true })
    writeFileSync(join(world.ws, 'build', 'obj', 'main.o'), 'x')
    const run = await runDsh(world, { script: [bash('rm -rf build && echo after')], answers: ['once'] })
    const [r] = results(run)
    assert.equal(existsSync(join(world.ws, 'build')), false)
    assert.equal(r.isError, false, r.text)
    assert.match(r.text, /after/)
    assert.doesNotMatch(r.text, /dsh-allow: removed|host process|escalation/)
  })
})

describe('audit: false', { skip: missing }, () => {
  let world
  before(() => { world = makeWorld('no-audit', { allowConfig: { audit: false } }) })
  after(() => cleanup(world))

  test('writes no ledger', async () => {
    const run = await runDsh(world, { script: [bash('cat README.md')] })
    assert.equal(results(run).length, 1, run.stdout + run.stderr)
    assert.equal(existsSync(join(world.dshHome, 'dsh-allow-audit.ndjson')), false)
  })
})
