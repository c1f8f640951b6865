// The managed policy inside the real DSH 0.1.0-rc.8 host: an administrator's
// file (the config's `managedFiles`, and once the system file itself, in a
// mount namespace whose /etc is an overlay of the test's own) that the
// user's rules, cards, modes and config cannot loosen. A scripted model
// issues real bash calls under the Landlock runner, a scripted human answers
// and types `/allow`; we read the results, the rules file and the ledger.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, PKG, results, runDsh, runnerWorks } from './harness.mjs'

const missing = missingPrerequisite() ?? (runnerWorks() ? undefined : 'the Landlock runner does not run here')
const bash = (command, extra = {}) => ({ tool: 'bash', arguments: { command, description: 'scripted step', ...extra } })
const SECRET = 'MANAGED-SECRET'

/**
 * A world whose config names one further managed file (admin/managed.json
 * in the world) holding `policy` (text or JSON; undefined: none written).
 */
function managedWorld(label, policy, allowConfig = {}) {
  const world = makeWorld(label, { allowConfig: (w) => ({ managedFiles: [join(w.root, 'admin', 'managed.json')], ...allowConfig }) })
  world.managedFile = join(world.root, 'admin', 'managed.json')
  world.auditFile = join(world.dshHome, 'dsh-allow-audit.ndjson')
  mkdirSync(join(world.root, 'admin'), { recursive: true })
  if (policy !== undefined) writeFileSync(world.managedFile, typeof policy === 'string' ? policy : JSON.stringify(policy))
  mkdirSync(join(world.home, 'secrets'), { recursive: true })
  writeFileSync(join(world.home, 'secrets', 'key'), `${SECRET}\n`)
  return world
}

function ledger(world) {
  return existsSync(world.auditFile) ? readFileSync(world.auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []
}

function commandsRun(run) {
  return run.answerer.filter((x) => x.kind === 'command')
}

const resultText = (r) => `${r.text}\n${r.value?.stdout?.text ?? ''}\n${r.value?.stderr?.text ?? ''}`

describe('the managed policy in a real DSH process', { skip: missing }, () => {
  const worlds = []
  after(() => worlds.forEach(cleanup))

  test('a managed deny refuses what the user\'s rule grants, hidden code included, and /allow add against it is refused', async () => {
    const world = managedWorld('managed-deny', { version: 1, deny: [{ path: '~/secrets', recursive: true, access: { read: true, write: true } }] })
    worlds.push(world)
    const key = join(world.home, 'secrets', 'key')
    const run = await runDsh(world, {
      commands: ['/allow add read ~/secrets/sub folder', '/allow add read,write ~ folder', '/allow status'],
      script: [
        bash(`cat ${key}`),
        bash(`python3 -c 'print(open("${key}").read())'`),
        bash(`echo stolen >> ${key}`),
        bash(`cat ${join(world.ws, 'README.md')}`),
      ],
    })
    const [added, around, status] = commandsRun(run)
    assert.equal(added.result.kind, 'error', JSON.stringify(added))
    assert.match(added.result.text, /Not added — the managed policy \(.*managed\.json\) denies read on ~\/secrets .*a rule there could never grant it/)
    assert.equal(around.result.kind, 'success', JSON.stringify(around))
    assert.match(around.result.text, /still denies read,write on ~\/secrets .*this rule does not reach it/)
    assert.equal(JSON.parse(run.rulesText).rules.length, 1, 'only the rule around the denied folder was stored')
    assert.match(status.result.text, new RegExp(`Managed policy: ${world.managedFile.replaceAll('.', '\\.')}`))
    assert.match(status.result.text, /denies read,write on ~\/secrets and everything in it/)
    assert.match(status.result.text, /Managed policy: none \(\/etc\/dsh-allow\/managed\.json is not there\)/, 'the system file is looked for')

    const r = results(run)
    assert.equal(r.length, 4, run.stdout + run.stderr)
    assert.equal(r[0].isError, true)
    assert.match(r[0].text, /dsh-allow: refused read .*the managed policy denies read on .*secrets for everyone/)
    // The user's rule now grants home: the decision leaves the inline code
    // to the kernel, which the managed deny holds shut.
    assert.doesNotMatch(resultText(r[1]), new RegExp(SECRET), 'the secret leaked to hidden code')
    assert.equal(r[2].isError, true)
    assert.equal(readFileSync(key, 'utf8'), `${SECRET}\n`)
    assert.equal(r[3].isError, false, 'what the policy does not name runs')

    const decisions = ledger(world).filter((l) => l.kind === 'decision')
    assert.deepEqual(decisions.map((l) => l.source), ['managed', 'fence', 'managed', 'baseline'], JSON.stringify(decisions, null, 1))
    // The kernel's refusal of the hidden read is in the ledger too.
    assert.ok(ledger(world).some((l) => l.kind === 'kernel' && l.denied.some((d) => d.path === key)), 'the kernel denial is recorded')
  })

  test('Always allow off: the card offers Deny and Allow once, Always allow stores nothing, /allow add is refused', async () => {
    const world = managedWorld('managed-always', { version: 1, alwaysAllow: false })
    worlds.push(world)
    mkdirSync(join(world.ws, 'build'), { recursive: true })
    mkdirSync(join(world.ws, 'build2'), { recursive: true })
    const run = await runDsh(world, {
      commands: ['/allow add delete build folder', '/allow command add npm'],
      script: [bash('rm -rf build'), bash('rm -rf build2')],
      answers: ['always', 'once'],
    })
    const [add, grant] = commandsRun(run)
    assert.match(add.result.text, /Not added — the managed policy .* turns Always allow off/)
    assert.match(grant.result.text, /Not added — the managed policy .* turns Always allow off/)
    const asked = approvals(run)
    assert.equal(asked.length, 2)
    for (const a of asked) assert.equal(a.pending.alwaysAllow, false, 'the card offers no Always allow')
    assert.match(asked[0].reason, /Always allow is off under the managed policy/)
    const failed = run.answerer.filter((x) => x.kind === 'always-failed')
    assert.equal(failed.length, 1)
    assert.match(failed[0].error, /the managed policy turns Always allow off/)
    assert.equal(run.rulesText, undefined, 'no rules file was written')
    const r = results(run)
    assert.deepEqual(r.map((x) => x.isError), [true, false], JSON.stringify(r, null, 1))
    assert.equal(existsSync(join(world.ws, 'build')), true, 'the refused Always allow ran nothing')
    assert.equal(existsSync(join(world.ws, 'build2')), false, 'Allow once still works')
  })

  test('a managed ask is a card every time, over the user\'s own rule, and the auto-reviewer never answers it', async () => {
    const world = managedWorld('managed-ask', undefined, { autoReview: { enabled: true, timeoutMs: 5000 } })
    worlds.push(world)
    writeFileSync(world.managedFile, JSON.stringify({ version: 1, ask: [{ path: join(world.ws, 'prod'), recursive: true, access: { delete: true } }] }))
    const core = await import(join(PKG, 'core', 'index.js'))
    writeFileSync(world.rulesFile, core.renderRules([{ id: 'mine', path: join(world.ws, 'prod'), recursive: true, access: { delete: true }, hits: 0, createdAt: '' }], []))
    mkdirSync(join(world.ws, 'prod', 'a'), { recursive: true })
    mkdirSync(join(world.ws, 'prod', 'b'), { recursive: true })
    const run = await runDsh(world, {
      prompt: 'please delete prod/a and prod/b',
      script: [bash('rm -rf prod/a'), bash('rm -rf prod/b')],
      reviews: ['ALLOW', 'ALLOW'],
      answers: ['once', 'reject'],
    })
    assert.equal(run.reviewer.length, 0, 'the reviewer was never asked')
    const asked = approvals(run)
    assert.equal(asked.length, 2, 'each delete asked, though a stored rule grants it')
    for (const a of asked) {
      assert.match(a.reason, /asks every time before delete in .*prod/)
      assert.equal(a.pending.alwaysAllow, false)
    }
    assert.equal(existsSync(join(world.ws, 'prod', 'a')), false, 'Allow once ran it')
    assert.equal(existsSync(join(world.ws, 'prod', 'b')), true, 'Deny kept it')
    const sources = ledger(world).filter((l) => l.kind === 'decision').map((l) => l.source)
    assert.deepEqual(sources, ['managed', 'managed'])
  })

  test('a mode the policy does not list: the switch is recorded as refused and no call runs under it, nor under an escalation to it', async () => {
    const world = managedWorld('managed-modes', { version: 1, modes: ['read-only', 'workspace-write'] })
    worlds.push(world)
    const escalated = await runDsh(world, {
      script: [bash('cat README.md', { sandbox_permissions: 'danger-full-access', justification: 'need it' }), bash('cat README.md')],
      answers: ['once'],
    })
    const e = results(escalated)
    assert.equal(e.length, 2, escalated.stdout + escalated.stderr)
    assert.equal(e[0].isError, true)
    assert.match(e[0].text, /allows only the sandbox modes read-only, workspace-write; no call runs under danger-full-access/)
    assert.equal(e[1].isError, false, 'the listed mode still runs')

    const switched = await runDsh(world, { commands: ['/permission danger-full-access', '/allow status'], script: [bash('cat README.md')] })
    const [, status] = commandsRun(switched)
    const [r] = results(switched)
    assert.equal(r.isError, true, JSON.stringify(r))
    assert.match(r.text, /no call runs under danger-full-access/)
    assert.match(status.result.text, /runs under danger-full-access, which the managed policy does not allow/)
    const modeRows = ledger(world).filter((l) => l.kind === 'mode')
    assert.ok(modeRows.some((l) => l.source === 'managed' && l.mode === 'danger-full-access'), JSON.stringify(modeRows))
  })

  test('a managed file that is there but cannot be used refuses every call, naming the file and the problem', async () => {
    for (const [label, make, says] of [
      ['managed-folder', (w) => mkdirSync(w.managedFile), /not a regular file/],
      ['managed-version', (w) => writeFileSync(w.managedFile, '{"version": 2}'), /version: 2 is not a version this dsh-allow reads/],
      ['managed-field', (w) => writeFileSync(w.managedFile, '{"version": 1, "deny": [{"path": "~/x", "access": {"red": true}}]}'), /deny\[0\]\.access\.red: unknown capability/],
    ]) {
      const world = managedWorld(label, undefined)
      worlds.push(world)
      make(world)
      const run = await runDsh(world, { script: [bash('cat README.md')], commands: ['/allow status'] })
      const [r] = results(run)
      assert.equal(r.isError, true, `${label}: ${JSON.stringify(r)}`)
      assert.ok(r.text.includes(world.managedFile), `${label}: ${r.text}`)
      assert.match(r.text, says)
      assert.match(r.text, /every call is refused until an administrator fixes it/)
      assert.match(commandsRun(run)[0].result.text, /CANNOT BE USED/)
    }
  })

  test('requireFence: a kernel fence weaker than the policy requires runs no call', async () => {
    const world = managedWorld('managed-fence', { version: 1, requireFence: 'guarded' }, { enforce: 'process' })
    worlds.push(world)
    const run = await runDsh(world, { script: [bash('cat README.md')] })
    const [r] = results(run)
    assert.equal(r.isError, true, JSON.stringify(r))
    assert.match(r.text, /requires the kernel fence at guarded or stronger, and here it enforces process/)
  })

  test('audit required: the ledger is written though the config turns it off, and a record it cannot take stops the call', async () => {
    const world = managedWorld('managed-audit', { version: 1, audit: 'required' }, { audit: false, auditFailure: 'warn' })
    worlds.push(world)
    const ran = await runDsh(world, { script: [bash('cat README.md')] })
    assert.equal(results(ran)[0].isError, false)
    assert.equal(ledger(world).filter((l) => l.kind === 'decision').length, 1, 'the ledger took the record though audit: false')
    // Now the ledger cannot take a record: a folder where its file is.
    const moved = join(world.root, 'ledger-aside')
    spawnSync('mv', [world.auditFile, moved])
    mkdirSync(world.auditFile)
    const run = await runDsh(world, { script: [bash('echo ran > ran.txt')] })
    const [r] = results(run)
    assert.equal(r.isError, true, JSON.stringify(r))
    assert.match(r.text, /nothing ran — the audit ledger .* could not record this call/)
    assert.match(r.text, /The managed policy requires the audit ledger/)
    assert.equal(existsSync(join(world.ws, 'ran.txt')), false, 'auditFailure: warn did not let it run')
  })
})

// The system file itself, at /etc/dsh-allow/managed.json: DSH runs in a mount
// namespace whose /etc is an overlay of this test's own, so the file exists
// for that process tree alone and nothing is left in the machine's /etc.
const canNamespace = process.getuid?.() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0
describe('the managed policy\'s system file in a real DSH process', { skip: missing ?? (canNamespace ? false : 'needs root and unshare -m for a private /etc') }, () => {
  let world
  before(() => { world = makeWorld('managed-system') })
  after(() => cleanup(world))

  test('a deny in /etc/dsh-allow/managed.json refuses the call, naming that file', async () => {
    const there = existsSync('/etc/dsh-allow/managed.json')
    const admin = join(world.root, 'admin')
    for (const d of ['upper', 'work']) mkdirSync(join(admin, d), { recursive: true })
    writeFileSync(join(admin, 'managed.json'), JSON.stringify({ version: 1, deny: [{ path: '~/secrets', access: { read: true } }] }))
    mkdirSync(join(world.home, 'secrets'), { recursive: true })
    writeFileSync(join(world.home, 'secrets', 'key'), `${SECRET}\n`)
    const setup = `mount --make-rprivate / && mount -t overlay overlay -o lowerdir=/etc,upperdir=${admin}/upper,workdir=${admin}/work /etc ` +
      `&& mkdir -p /etc/dsh-allow && cp ${admin}/managed.json /etc/dsh-allow/managed.json && exec "$@"`
    const run = await runDsh(world, {
      wrap: ['unshare', '-m', '/bin/sh', '-c', setup, 'sh'],
      script: [bash(`cat ${join(world.home, 'secrets', 'key')}`), bash('echo x > /etc/dsh-allow/managed.json')],
      commands: ['/allow status'],
    })
    const r = results(run)
    assert.equal(r.length, 2, run.stdout + run.stderr)
    assert.equal(r[0].isError, true)
    assert.match(r[0].text, /the managed policy denies read on .*secrets for everyone \(\/etc\/dsh-allow\/managed\.json deny\[0\]\)/)
    assert.doesNotMatch(resultText(r[0]), new RegExp(SECRET))
    assert.equal(r[1].isError, true, 'the managed file is a protected path')
    assert.match(r[1].text, /would change the permission store \(\/etc\/dsh-allow\/managed\.json\)|protected/)
    assert.match(commandsRun(run)[0].result.text, /Managed policy: \/etc\/dsh-allow\/managed\.json\n/)
    assert.equal(existsSync('/etc/dsh-allow/managed.json'), there, 'the machine\'s own /etc is untouched')
  })
})
