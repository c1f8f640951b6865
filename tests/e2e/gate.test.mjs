// dsh-allow inside the real DSH 0.1.0-rc.8 host: a scripted model issues real
// bash calls, a scripted human answers, and we read the session log, the
// rules file and the files on disk. Nothing of the host is mocked.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, results, runDsh, runnerWorks, sessionEvents } from './harness.mjs'

const missing = missingPrerequisite()
const kernel = missing === undefined && runnerWorks()
const bash = (command, extra = {}) => ({ tool: 'bash', arguments: { command, description: 'scripted step', ...extra } })
const NO_CHANNEL = 'tool "bash" requires approval, but no approval channel is available'

function storedRules(run) {
  return run.rulesText === undefined ? undefined : JSON.parse(run.rulesText).rules
}

describe('dsh-allow in a real DSH process', { skip: missing }, () => {
  let world
  before(() => { world = makeWorld('gate') })
  after(() => cleanup(world))

  test('reads and creates in the workspace run without a prompt; delete asks, once is once, always is stored', async () => {
    mkdirSync(join(world.ws, 'build', 'obj'), { recursive: true })
    mkdirSync(join(world.ws, 'build2'), { recursive: true })
    const run = await runDsh(world, {
      script: [
        bash('cat README.md'),
        bash('echo x > out.md'),
        bash('rm -rf build'),
        bash('rm -rf build2'),
        bash('mkdir build2 && rm -rf build2'),
      ],
      answers: ['once', 'always'],
    })
    const r = results(run)
    assert.equal(r.length, 5, run.stdout + run.stderr)
    assert.deepEqual(r.map((x) => x.isError), [false, false, false, false, false], JSON.stringify(r, null, 1))
    assert.match(r[0].text, /fixture workspace/)
    assert.equal(readFileSync(join(world.ws, 'out.md'), 'utf8'), 'x\n')
    assert.equal(existsSync(join(world.ws, 'build')), false)
    assert.equal(existsSync(join(world.ws, 'build2')), false)

    const asked = approvals(run)
    assert.deepEqual(asked.map((a) => a.pending?.command), ['rm -rf build', 'rm -rf build2'], 'exactly the two deletes asked')
    for (const a of asked) assert.match(a.reason, /^dsh-allow: .*delete .*build/)
    assert.equal(sessionEvents(run, 'approval/asked').length, 2)

    const rules = storedRules(run)
    assert.equal(rules.length, 1, run.rulesText)
    assert.equal(rules[0].path, join(world.ws, 'build2'))
    assert.deepEqual(rules[0].access, { delete: true })

    // Who decided: the baseline for the workspace read, the stored rule for the last delete.
    const decided = (command) => run.answerer.filter((x) => x.kind === 'decided' && x.record.command === command).map((x) => x.record)
    const [read] = decided('cat README.md')
    assert.equal(read.decision, 'allow')
    assert.ok(read.effects.some((e) => e.path === join(world.ws, 'README.md') && e.capability === 'read' && e.tier === 'baseline'), JSON.stringify(read.effects))
    const [again] = decided('mkdir build2 && rm -rf build2')
    assert.equal(again.decision, 'allow')
    assert.ok(again.effects.some((e) => e.capability === 'delete' && e.tier === 'rule' && e.ruleId === rules[0].id), JSON.stringify(again.effects))
  })

  test('Allow once is not remembered: the same delete asks again in the next session', async () => {
    mkdirSync(join(world.ws, 'build'), { recursive: true })
    const run = await runDsh(world, { script: [bash('rm -rf build')], answers: [] })
    const [r] = results(run)
    assert.equal(r.isError, true)
    assert.match(r.text, new RegExp(NO_CHANNEL.replace(/"/g, '.')))
    assert.equal(existsSync(join(world.ws, 'build')), true, 'nothing ran')
  })

  test('no answerer: the call is refused with DSH\'s own message and nothing is stored', async () => {
    const before = existsSync(world.rulesFile) ? readFileSync(world.rulesFile, 'utf8') : undefined
    mkdirSync(join(world.ws, 'keep'), { recursive: true })
    const run = await runDsh(world, { script: [bash('rm -rf keep')], answers: [] })
    const [r] = results(run)
    assert.equal(r.isError, true)
    assert.ok(r.text.includes(NO_CHANNEL), r.text)
    assert.equal(existsSync(join(world.ws, 'keep')), true)
    assert.equal(run.rulesText, before)
  })

  test('the permission store is refused to bash and to the write tool', async () => {
    const before = existsSync(world.rulesFile) ? readFileSync(world.rulesFile, 'utf8') : undefined
    const run = await runDsh(world, {
      script: [
        bash(`echo x > ${world.rulesFile}`),
        { tool: 'write', arguments: { file_path: world.rulesFile, content: '{"version":3,"rules":[]}' } },
      ],
      answers: ['once', 'once'],
    })
    const r = results(run)
    assert.equal(r.length, 2, run.stdout + run.stderr)
    for (const x of r) {
      assert.equal(x.isError, true, JSON.stringify(x))
      assert.match(x.text, /dsh-allow: refused/)
    }
    assert.equal(approvals(run).length, 0, 'a protected path is refused, never asked')
    assert.equal(existsSync(world.rulesFile) ? readFileSync(world.rulesFile, 'utf8') : undefined, before)
  })

  test('the SSH key in the fixture home is not readable: stopped at the gate, naming read and the path', async () => {
    const run = await runDsh(world, { script: [bash('cat ~/.ssh/id_ed25519')], answers: [] })
    const [r] = results(run)
    assert.equal(r.isError, true)
    assert.doesNotMatch(r.text, /OPENSSH/)
    // The core refuses a credential store outright (the spec's table); a
    // prompt would also keep it shut here, since nobody answers.
    const [a] = approvals(run)
    const reason = a?.reason ?? r.text
    assert.match(reason, /dsh-allow: (refused )?read [^ ]*\/home\/\.ssh\/id_ed25519/)
  })

  test('a sandbox_permissions escalation is never answered by a rule', async () => {
    const ro = makeWorld('escalation')
    try {
      // A rule granting the whole workspace everything, then a read-only session.
      const add = await runDsh(ro, { commands: ['/allow add read,write,create,delete,execute .'] })
      assert.equal(storedRules(add).length, 1, JSON.stringify(add.answerer))
      const run = await runDsh(ro, {
        mode: 'read-only',
        script: [bash('echo data > inside.txt', { sandbox_permissions: 'workspace-write', justification: 'The test writes inside.txt.' })],
        answers: ['pass'],
      })
      const [r] = results(run)
      assert.equal(r.isError, true, JSON.stringify(r))
      assert.match(r.text, /sandbox escalation to "workspace-write" requires approval, but no approval channel is available/)
      assert.equal(existsSync(join(ro.ws, 'inside.txt')), false)
      const [a] = approvals(run)
      assert.match(a.reason, /^escalate sandbox to workspace-write/)
      assert.equal(a.pending, undefined, 'not a dsh-allow prompt')
    } finally {
      cleanup(ro)
    }
  })

  test('two calls in one session never share one Allow once', async () => {
    mkdirSync(join(world.ws, 'twice'), { recursive: true })
    const run = await runDsh(world, {
      script: [{ calls: [bash('rm -rf twice'), bash('rm -rf twice')] }],
      answers: ['once', 'reject'],
      holdMs: 200,
    })
    const r = results(run)
    assert.equal(r.length, 2, run.stdout + run.stderr)
    const asked = approvals(run)
    assert.equal(asked.length, 2, 'each call asked for itself')
    assert.notEqual(asked[0].callId, asked[1].callId)
    assert.equal(r.find((x) => x.callId === asked[0].callId).isError, false)
    const second = r.find((x) => x.callId === asked[1].callId)
    assert.equal(second.isError, true)
    assert.match(second.text, /the user rejected tool "bash"/)
    const firstDone = run.answerer.find((x) => x.kind === 'result' && x.callId === asked[0].callId).at
    assert.ok(asked[1].at >= firstDone, 'the second call was decided only after the first settled')
  })

  test('/allow add, list, remove and clear manage the stored rules, in the user\'s language', async () => {
    const w = makeWorld('commands')
    try {
      mkdirSync(join(w.ws, 'build'), { recursive: true })
      const run = await runDsh(w, {
        commands: ['/allow add delete,write build', '/allow add execute /usr/bin/gh file', '/allow list', '/allow remove 2', '/allow status', '/allow bogus'],
      })
      const said = run.answerer.filter((x) => x.kind === 'command')
      assert.equal(said.length, 6, JSON.stringify(run.answerer))
      assert.match(said[0].result.text, /build/)
      assert.match(said[2].result.text, /1\. .*build .*write,delete|1\. .*build .*delete/)
      assert.match(said[2].result.text, /2\. \/usr\/bin\/gh\s+execute/)
      assert.match(said[4].result.text, /Kernel fence/)
      assert.equal(said[5].result.kind, 'error')
      const rules = storedRules(run)
      assert.equal(rules.length, 1)
      assert.equal(rules[0].path, join(w.ws, 'build'))
      assert.equal(rules[0].recursive, true)
      assert.deepEqual(rules[0].access, { write: true, delete: true })

      const deleted = await runDsh(w, { script: [bash('rm -rf build')], answers: [] })
      assert.equal(results(deleted)[0].isError, false, 'a stored rule answers without asking')
      assert.equal(approvals(deleted).length, 0)

      const zh = await runDsh(w, { prompt: '请列出规则', commands: ['/allow clear', '/allow'] })
      const zhSaid = zh.answerer.filter((x) => x.kind === 'command')
      assert.match(zhSaid[1].result.text, /没有已存的规则/)
      assert.deepEqual(storedRules(zh), [])
    } finally {
      cleanup(w)
    }
  })

  test('a corrupted rules file: calls prompt, /allow reports it, the file is unchanged', async () => {
    const w = makeWorld('corrupt')
    try {
      const broken = '{"version": 3, "rules": [ {"path": '
      writeFileSync(w.rulesFile, broken)
      const run = await runDsh(w, {
        script: [bash('cat README.md')],
        answers: [],
        commands: ['/allow list', '/allow add delete build'],
      })
      const [a] = approvals(run)
      assert.ok(a, 'even a baseline read asks')
      assert.match(a.reason, /^dsh-allow: .*rules file .*cannot be used/)
      const said = run.answerer.filter((x) => x.kind === 'command')
      assert.match(said[0].result.text, /cannot be used/)
      assert.equal(said[1].result.kind, 'error')
      assert.equal(readFileSync(w.rulesFile, 'utf8'), broken)
    } finally {
      cleanup(w)
    }
  })

  test('an old-format rules file is a fault, not "no rules": /allow add changes nothing and no backup is made', async () => {
    const w = makeWorld('v2')
    try {
      const old = '{"version": 2, "rules": [{"prefix": "git status"}]}\n'
      writeFileSync(w.rulesFile, old)
      const run = await runDsh(w, { commands: ['/allow add delete build'] })
      assert.equal(readFileSync(w.rulesFile, 'utf8'), old)
      assert.equal(existsSync(`${w.rulesFile}.v2.bak`), false)
      assert.match(run.answerer.find((x) => x.kind === 'command').result.text, /Nothing was changed.*version: 2/)
    } finally {
      cleanup(w)
    }
  })
})

describe('dsh-allow with the Landlock runner', { skip: missing ?? (kernel ? false : 'pkg/bin/linux-x64/dsh-allow cannot run a command under a profile yet') }, () => {
  let world
  before(() => { world = makeWorld('kernel') })
  after(() => cleanup(world))

  test('inline code that deletes in the workspace is refused by the kernel while delete is not granted', async () => {
    mkdirSync(join(world.ws, 'build'), { recursive: true })
    writeFileSync(join(world.ws, 'build', 'x'), 'x')
    const run = await runDsh(world, { script: [bash(`python3 -c 'import os; os.remove("build/x")'`)], answers: [] })
    const [r] = results(run)
    assert.match(r.text, /Permission ?Error|Permission denied|Operation not permitted/i, JSON.stringify(r))
    assert.equal(existsSync(join(world.ws, 'build', 'x')), true)
    // The denial comes back as guidance naming the path and how to ask for
    // it, and the call is an error for the model; DSH's own "escalation
    // available" hint (a wider sandbox mode) is not there.
    assert.match(r.text, /dsh-allow: the kernel fence refused .*build\/x.*Do not work around it/s, JSON.stringify(r))
    assert.match(r.text, /refused part of this command \(delete on \S*build\/x \(unlink by python3\)\)/, r.text)
    assert.equal(r.isError, true, JSON.stringify(r))
    assert.doesNotMatch(r.text, /escalation available|sandbox_permissions/)
  })

  test('compiled fences are kept in $DSH_HOME/dsh-allow-fence, which no tool may write', async () => {
    const cache = join(world.dshHome, 'dsh-allow-fence')
    // A fence is kept once the folders it depends on have been still for a
    // second (the first decision creates the audit log in $DSH_HOME).
    const run = await runDsh(world, {
      script: [
        bash('sleep 1.5'),
        bash('true'),
        bash(`echo 'rule 32767 /' > ${join(cache, 'fence-00')}`),
        { tool: 'write', arguments: { file_path: join(cache, 'fence-01'), content: 'rule 32767 /' } },
      ],
      answers: ['once', 'once'],
    })
    const r = results(run)
    assert.equal(r.length, 4, run.stdout + run.stderr)
    assert.equal(r[1].isError, false, JSON.stringify(r[1]))
    const kept = existsSync(cache) ? readdirSync(cache) : []
    assert.ok(kept.some((f) => /^fence-\d\d$/.test(f)), `no fence kept in ${cache}: ${kept}`)
    for (const x of r.slice(2)) {
      assert.equal(x.isError, true, JSON.stringify(x))
      assert.match(x.text, /dsh-allow: refused/)
    }
    assert.equal(approvals(run).length, 0, 'a protected path is refused, never asked')
    // Every file in the cache (the keeper's socket beside them is none).
    for (const f of readdirSync(cache).filter((f) => statSync(join(cache, f)).isFile())) assert.doesNotMatch(readFileSync(join(cache, f), 'utf8'), /^rule 32767 \/$/m)
  })

  test('the SSH key is refused by the kernel even when run with a grant elsewhere', async () => {
    const key = join(world.home, '.ssh', 'id_ed25519')
    const run = await runDsh(world, { script: [bash(`python3 -c 'print(open("${key}").read())'`)], answers: ['once'] })
    const [r] = results(run)
    assert.doesNotMatch(r.text, /OPENSSH/)
    assert.match(r.text, /PermissionError|Permission denied/, JSON.stringify(r))
  })
})
