// The optional auto-reviewer inside the real DSH 0.1.0-rc.8 host: the
// scripted model plays both the agent and the reviewer (it tells them apart
// by the reviewer's message, which comes from the plugin `dsh-allow`), a
// scripted human answers the card. The rules file is compared byte for byte
// after every run: the reviewer never writes a rule.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, PKG, results, runDsh, sessionEvents } from './harness.mjs'

const missing = missingPrerequisite()
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const NO_CHANNEL = 'tool "bash" requires approval, but no approval channel is available'
const PROMPT = 'please delete the build folder'

/** A world with auto-review on and a rules file holding one rule (delete on keep/). */
async function reviewWorld(label, autoReview) {
  const world = makeWorld(label, { allowConfig: { autoReview: { enabled: true, ...autoReview } } })
  const core = await import(join(PKG, 'core', 'index.js'))
  const rule = { id: 'keep-rule', path: join(world.ws, 'keep'), recursive: true, access: { delete: true }, hits: 0, createdAt: '2026-12-01T00:00:00.000Z' }
  writeFileSync(world.rulesFile, core.renderRules([rule], []))
  world.rulesBytes = readFileSync(world.rulesFile)
  world.auditFile = join(world.dshHome, 'dsh-allow-audit.ndjson')
  return world
}

function rulesUnchanged(world) {
  assert.ok(readFileSync(world.rulesFile).equals(world.rulesBytes), 'the rules file is byte-for-byte unchanged')
}

function reviewLines(world) {
  if (!existsSync(world.auditFile)) return []
  return readFileSync(world.auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.kind === 'review')
}

function decided(run) {
  return sessionEvents(run, 'approval/decided').map((e) => e.data.outcome)
}

describe('auto-review in a real DSH process', { skip: missing }, () => {
  let world
  before(async () => { world = await reviewWorld('review', { timeoutMs: 5000 }) })
  after(() => cleanup(world))

  test('ALLOW runs the call once; the next identical call is reviewed again; nothing is stored', async () => {
    mkdirSync(join(world.ws, 'build', 'obj'), { recursive: true })
    const run = await runDsh(world, {
      prompt: PROMPT,
      script: [bash('rm -rf build'), bash('mkdir -p build/obj'), bash('rm -rf build')],
      reviews: ['ALLOW', 'ALLOW'],
      answers: [],
    })
    const r = results(run)
    assert.equal(r.length, 3, run.stdout + run.stderr)
    assert.deepEqual(r.map((x) => x.isError), [false, false, false], JSON.stringify(r, null, 1))
    assert.equal(existsSync(join(world.ws, 'build')), false)

    assert.equal(run.reviewer.length, 2, 'each delete was reviewed, the second as afresh as the first')
    assert.equal(approvals(run).length, 0, 'the card was never shown')
    assert.deepEqual(decided(run), ['allowed-once', 'allowed-once'], 'DSH still logs the approval pair')
    rulesUnchanged(world)

    const lines = reviewLines(world)
    assert.equal(lines.length, 2)
    for (const l of lines) {
      assert.equal(l.verdict, 'ALLOW')
      assert.equal(l.route, 'stub/stub-1')
      assert.equal(typeof l.latencyMs, 'number')
      assert.equal(l.reason, 'the user asked for exactly this')
    }
    const core = await import(join(PKG, 'core', 'index.js'))
    const rows = core.foldLedger(readFileSync(world.auditFile, 'utf8'), { sessionId: lines[0].sessionId }).rows
    assert.deepEqual(rows.map((x) => [x.command, x.source, x.outcome]), [
      ['rm -rf build', 'auto-review', 'allowed'],
      ['rm -rf build', 'auto-review', 'allowed'],
    ])
  })

  test('the reviewer is shown the analysed request and only the user\'s words, with the fixed prompt', async () => {
    mkdirSync(join(world.ws, 'build'), { recursive: true })
    const run = await runDsh(world, { prompt: PROMPT, script: [bash('rm -rf build')], reviews: ['ALLOW'] })
    const [seen] = run.reviewer
    assert.ok(seen, run.stdout + run.stderr)
    assert.equal(seen.provider, 'stub')
    assert.equal(seen.model, 'stub-1')
    assert.match(seen.system, /Only the user's own words authorise\./)
    assert.deepEqual(JSON.parse(seen.shown), {
      command: 'rm -rf build',
      cwd: world.ws,
      workspace: world.ws,
      requestedPermissions: [{ operation: 'delete', path: join(world.ws, 'build') }],
      userMessages: [PROMPT],
    })
    // The system-prompt plugin's injected user/message is in the session, and not shown.
    assert.ok(sessionEvents(run, 'user/message').some((e) => e.data.source.kind === 'plugin'))
    rulesUnchanged(world)
  })

  test('the deterministic policy speaks first: an allowed call and a refused one never reach the reviewer', async () => {
    mkdirSync(join(world.ws, 'keep'), { recursive: true })
    const run = await runDsh(world, {
      prompt: PROMPT,
      script: [bash('cat README.md'), bash('rm -rf keep'), bash('cat ~/.ssh/id_ed25519')],
      reviews: ['ALLOW', 'ALLOW', 'ALLOW'],
    })
    const r = results(run)
    assert.equal(r.length, 3, run.stdout + run.stderr)
    assert.deepEqual(r.map((x) => x.isError), [false, false, true])
    assert.match(r[2].text, /dsh-allow: refused/)
    assert.equal(run.reviewer.length, 0, 'no review for the baseline, the stored rule or the refusal')
    rulesUnchanged(world)
  })

  test('ASK shows the card: the human answers, or without one DSH denies', async () => {
    mkdirSync(join(world.ws, 'build'), { recursive: true })
    const answered = await runDsh(world, { prompt: PROMPT, script: [bash('rm -rf build')], reviews: ['ASK'], answers: ['once'] })
    assert.equal(answered.reviewer.length, 1)
    const [card] = approvals(answered)
    assert.match(card?.reason ?? '', /^dsh-allow: delete /, 'the card was shown after the ASK')
    assert.equal(results(answered)[0].isError, false)
    assert.equal(existsSync(join(world.ws, 'build')), false)

    mkdirSync(join(world.ws, 'build'), { recursive: true })
    const unanswered = await runDsh(world, { prompt: PROMPT, script: [bash('rm -rf build')], reviews: ['ASK'], answers: [] })
    const [r] = results(unanswered)
    assert.equal(r.isError, true)
    assert.ok(r.text.includes(NO_CHANNEL), r.text)
    assert.equal(existsSync(join(world.ws, 'build')), true, 'nothing ran')
    assert.equal(reviewLines(world).at(-1).verdict, 'ASK')
    rulesUnchanged(world)
  })

  test('an answer that is not a clear ALLOW is an ASK: prose, an unknown verdict', async () => {
    mkdirSync(join(world.ws, 'build'), { recursive: true })
    const run = await runDsh(world, {
      prompt: PROMPT,
      script: [bash('rm -rf build'), bash('rm -rf build')],
      reviews: ['Sure, ALLOW it.', '{"verdict":"YES","reason":"fine"}'],
      answers: ['reject', 'reject'],
    })
    assert.equal(run.reviewer.length, 2)
    assert.equal(approvals(run).length, 2, 'both went to the card')
    assert.equal(existsSync(join(world.ws, 'build')), true)
    const [prose, unknown] = reviewLines(world).slice(-2)
    assert.match(prose.reason, /not JSON/)
    assert.match(unknown.reason, /unknown verdict/)
    rulesUnchanged(world)
  })
})

describe('auto-review that cannot answer falls back to the card', { skip: missing }, () => {
  test('a reviewer that hangs past timeoutMs shows the card', async () => {
    const world = await reviewWorld('review-hang', { timeoutMs: 400 })
    try {
      mkdirSync(join(world.ws, 'build'), { recursive: true })
      const run = await runDsh(world, { prompt: PROMPT, script: [bash('rm -rf build')], reviews: ['hang'], answers: ['reject'] })
      assert.equal(run.reviewer.length, 1, run.stdout + run.stderr)
      assert.equal(approvals(run).length, 1, 'the card was shown')
      const [r] = results(run)
      assert.equal(r.isError, true)
      assert.match(r.text, /rejected/)
      assert.equal(existsSync(join(world.ws, 'build')), true)
      const [line] = reviewLines(world)
      assert.equal(line.verdict, 'ASK')
      assert.match(line.reason, /did not answer within 400 ms/)
      assert.ok(line.latencyMs >= 380 && line.latencyMs < 5000, String(line.latencyMs))
      rulesUnchanged(world)
    } finally {
      cleanup(world)
    }
  })

  test('no model route shows the card (provider without model; a provider DSH does not know)', async () => {
    for (const [label, autoReview, why] of [
      ['review-half', { provider: 'stub' }, /go together/],
      ['review-nowhere', { provider: 'nowhere', model: 'none-1' }, /reviewer's call (ended|failed)/],
    ]) {
      const world = await reviewWorld(label, { timeoutMs: 5000, ...autoReview })
      try {
        mkdirSync(join(world.ws, 'build'), { recursive: true })
        const run = await runDsh(world, { prompt: PROMPT, script: [bash('rm -rf build')], reviews: ['ALLOW'], answers: ['once'] })
        assert.equal(run.reviewer.length, 0, `${label}: the stub model was never asked to review`)
        assert.equal(approvals(run).length, 1, `${label}: the card was shown`)
        assert.equal(results(run)[0].isError, false)
        const [line] = reviewLines(world)
        assert.equal(line.verdict, 'ASK')
        assert.match(line.reason, why)
        rulesUnchanged(world)
      } finally {
        cleanup(world)
      }
    }
  })
})
