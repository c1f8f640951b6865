// Faults, in a real (headless) DSH process: what dsh-allow does when its own
// files are damaged, unwritable or huge, when the workspace is `/`, and
// when names carry control characters. Each case fails closed (the call
// asks or does not run, and the user is told) and loses nothing (the rules
// file is kept byte for byte, the ledger holds every record or the call did
// not run).
//
// Faults in the middle of a session come from a test plugin
// (plugins/fault-injector.js) that changes files, or types `/allow …`,
// before a given step of the scripted model.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, PKG, results, runDsh, runnerWorks, sessionEvents } from './harness.mjs'

const missing = missingPrerequisite()
const kernel = missing === undefined && runnerWorks()
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const SECRET = 'SECRET-TOKEN-35'

/** A world with `ws/secret/token` and the rules file holding `text`. */
function secretWorld(label, rulesText, options) {
  const world = makeWorld(label, options)
  mkdirSync(join(world.ws, 'secret'), { recursive: true })
  writeFileSync(join(world.ws, 'secret', 'token'), `${SECRET}\n`)
  if (rulesText !== undefined) writeFileSync(world.rulesFile, rulesText)
  return world
}

/** A rule that denies reading `<ws>/secret`, in the current file shape but for `version`. */
function denyFile(world, head) {
  const rule = { id: 'deny-secret', path: join(world.ws, 'secret'), recursive: true, access: { read: false }, hits: 0, createdAt: '2026-01-01T00:00:00.000Z' }
  return `${JSON.stringify({ ...head, rules: [rule] }, null, 2)}\n`
}

/** Runs the injector's steps in this session. */
function injector(world, steps) {
  const log = join(world.root, `faults-${world.runs + 1}.jsonl`)
  return { plugin: { id: 'e2e-fault-injector', file: 'fault-injector.js', config: { log, steps } }, log }
}

function readLog(file) {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
}

function commandText(entry) {
  return entry?.result?.text ?? entry?.error ?? ''
}

/** Give the world's dsh-allow host row this config (after makeWorld made the world). */
function configure(world, config) {
  const patch = join(world.profile, 'cordis.patch.yml')
  const text = readFileSync(patch, 'utf8').replace(/\n {6}config: .*\n/, '\n')
  writeFileSync(patch, text.replace('      name: dsh-allow\n', `      name: dsh-allow\n      config: ${JSON.stringify(config)}\n`))
}

function ledgerOf(world) {
  return join(world.dshHome, 'dsh-allow-audit.ndjson')
}

describe('a rules file we cannot read completely is never read as fewer rules', { skip: missing }, () => {
  const shapes = {
    'version missing': {},
    'version 2': { version: 2 },
    'version "3" (a string)': { version: '3' },
    'version 4 (newer)': { version: 4 },
  }
  for (const [label, head] of Object.entries(shapes)) {
    test(`${label}, holding a deny: the secret is not read, every call asks, /allow add changes nothing, the file is kept byte for byte`, async () => {
      const world = secretWorld('rules-shape', undefined)
      const text = denyFile(world, head)
      writeFileSync(world.rulesFile, text)
      try {
        const run = await runDsh(world, {
          script: [bash('cat secret/token'), bash('cat README.md')],
          commands: ['/allow add read ~/notes folder', '/allow status'],
        })
        const r = results(run)
        assert.equal(r.length, 2, run.stdout + run.stderr)
        assert.ok(!r[0].text.includes(SECRET), `the secret was printed: ${r[0].text}`)
        assert.equal(r[0].isError, true)
        // Even what the baseline allows asks: the file may hold denials.
        assert.equal(r[1].isError, true, r[1].text)
        const asked = approvals(run)
        assert.equal(asked.length, 2)
        for (const a of asked) {
          assert.match(a.reason, /rules file .*cannot be used/)
          assert.ok(a.reason.includes(world.rulesFile), a.reason)
        }
        const [added, status] = run.answerer.filter((e) => e.kind === 'command')
        assert.match(commandText(added), /Nothing was changed/)
        assert.match(commandText(status), /cannot be used/)
        assert.match(commandText(status), /version/)
        assert.equal(readFileSync(world.rulesFile, 'utf8'), text, 'the file is kept byte for byte')
        assert.equal(existsSync(`${world.rulesFile}.v2.bak`), false)
      } finally {
        cleanup(world)
      }
    })
  }

  test('a top-level key this version does not know (a newer file\'s "deny" list) fails closed too', async () => {
    const world = secretWorld('rules-key', undefined)
    const text = `${JSON.stringify({ version: 3, rules: [], deny: [{ path: join(world.ws, 'secret') }] })}\n`
    writeFileSync(world.rulesFile, text)
    try {
      const run = await runDsh(world, { script: [bash('cat secret/token')] })
      const [r] = results(run)
      assert.ok(!r.text.includes(SECRET), r.text)
      assert.match(approvals(run)[0]?.reason ?? '', /deny: unknown field/)
      assert.equal(readFileSync(world.rulesFile, 'utf8'), text)
    } finally {
      cleanup(world)
    }
  })

  test('a key given twice (a second, empty "rules") fails closed, never the last one winning', async () => {
    const world = secretWorld('rules-twice', undefined)
    const deny = JSON.stringify([{ path: join(world.ws, 'secret'), recursive: true, access: { read: false } }])
    const text = `{"version": 3, "rules": ${deny}, "rules": []}\n`
    writeFileSync(world.rulesFile, text)
    try {
      const run = await runDsh(world, { script: [bash('cat secret/token')] })
      const [r] = results(run)
      assert.ok(!r.text.includes(SECRET), r.text)
      assert.match(approvals(run)[0]?.reason ?? '', /twice/)
      assert.equal(readFileSync(world.rulesFile, 'utf8'), text)
    } finally {
      cleanup(world)
    }
  })

  test('an empty file at session start is a fault, not "no rules"', async () => {
    const world = secretWorld('rules-empty', '')
    try {
      const run = await runDsh(world, { script: [bash('cat secret/token')], commands: ['/allow status'] })
      const [r] = results(run)
      assert.ok(!r.text.includes(SECRET), r.text)
      assert.match(approvals(run)[0]?.reason ?? '', /rules file .*is empty/)
      assert.match(commandText(run.answerer.find((e) => e.kind === 'command')), /is empty/)
      assert.equal(readFileSync(world.rulesFile, 'utf8'), '')
    } finally {
      cleanup(world)
    }
  })

  test('no rules file at the first start is no rules: the baseline allows without asking', async () => {
    const world = secretWorld('rules-none', undefined)
    try {
      const run = await runDsh(world, { script: [bash('cat README.md')] })
      const [r] = results(run)
      assert.equal(r.isError, false, r.text)
      assert.equal(approvals(run).length, 0)
    } finally {
      cleanup(world)
    }
  })

  const midSession = {
    emptied: (world) => [{ write: world.rulesFile, text: '' }],
    'its version removed': (world) => [{ write: world.rulesFile, text: denyFile(world, {}) }],
    vanished: (world) => [{ remove: world.rulesFile }],
  }
  for (const [label, fault] of Object.entries(midSession)) {
    test(`rules file ${label} in the middle of a session: the next calls ask and /allow status says why`, async () => {
      const world = secretWorld('rules-mid', undefined)
      writeFileSync(world.rulesFile, denyFile(world, { version: 3 }))
      const faults = injector(world, { 1: [...fault(world), { command: '/allow status' }] })
      try {
        const run = await runDsh(world, {
          script: [bash('cat README.md'), bash('cat secret/token'), bash('cat README.md')],
          plugins: [faults.plugin],
        })
        const r = results(run)
        assert.equal(r.length, 3, run.stdout + run.stderr)
        assert.equal(r[0].isError, false, 'before the fault the baseline allows')
        assert.ok(!r[1].text.includes(SECRET), r[1].text)
        assert.equal(r[2].isError, true, 'after the fault even the baseline asks')
        const asked = approvals(run)
        assert.ok(asked.length >= 2)
        assert.match(asked.at(-1).reason, /rules file .*cannot be used/)
        const status = readLog(faults.log).find((e) => e.action.command)
        assert.match(commandText(status), /cannot be used/)
      } finally {
        cleanup(world)
      }
    })
  }
})

describe('many rules: 10,000 stored rules, every call decides and runs', { skip: missing }, () => {
  let world
  before(() => {
    world = secretWorld('many-rules', undefined)
    const rules = []
    for (let i = 0; i < 10_000; i += 1) {
      const path = join(world.root, 'many', `r${i}`)
      if (i % 10 === 0) mkdirSync(path, { recursive: true })
      rules.push({ id: `r${i}`, path, recursive: true, access: { read: true, write: i % 2 === 0 }, hits: 0, createdAt: '' })
    }
    rules.push({ id: 'deny-secret', path: join(world.ws, 'secret'), recursive: true, access: { read: false }, hits: 0, createdAt: '' })
    writeFileSync(world.rulesFile, `${JSON.stringify({ version: 3, rules }, null, 2)}\n`)
  })
  after(() => cleanup(world))

  test('fenced calls run (no E2BIG), a rule among them grants, and the deny among them still holds', { skip: !kernel && 'the Landlock runner does not work here' }, async () => {
    writeFileSync(join(world.root, 'many', 'r20', 'note.txt'), 'ruled\n')
    const run = await runDsh(world, {
      script: [
        bash('echo hello > out.txt && cat out.txt'),
        bash(`cat ${join(world.root, 'many', 'r20', 'note.txt')}`),
        bash('cat secret/token'),
        bash('python3 -c "print(open(\'README.md\').read())"'),
      ],
      timeoutMs: 180_000,
    })
    const r = results(run)
    assert.equal(r.length, 4, run.stdout + run.stderr)
    assert.match(r[0].text, /hello/)
    assert.ok(!/E2BIG/.test(r[0].text), r[0].text)
    assert.match(r[1].text, /ruled/)
    assert.ok(!r[2].text.includes(SECRET), r[2].text)
    assert.match(r[3].text, /fixture workspace/)
  })
})

describe('the ledger never loses a record silently', { skip: missing }, () => {
  test('a folder at the ledger\'s path: the call does not run, and its result names the file and why', async () => {
    const world = makeWorld('ledger-dir')
    mkdirSync(ledgerOf(world))
    try {
      const run = await runDsh(world, { script: [bash('echo ran > marker.txt')] })
      const [r] = results(run)
      assert.equal(existsSync(join(world.ws, 'marker.txt')), false, 'the call ran unrecorded')
      assert.equal(r.isError, true)
      assert.ok(r.text.includes(ledgerOf(world)), r.text)
      assert.match(r.text, /EISDIR/)
    } finally {
      cleanup(world)
    }
  })

  test('an immutable ledger (chattr +i): the call does not run', async (t) => {
    const world = makeWorld('ledger-immutable')
    writeFileSync(ledgerOf(world), '')
    const set = spawnSync('chattr', ['+i', ledgerOf(world)], { encoding: 'utf8' })
    if (set.status !== 0) {
      cleanup(world)
      t.skip(`cannot make a file immutable here: ${set.error?.message ?? set.stderr}`)
      return
    }
    try {
      const run = await runDsh(world, { script: [bash('echo ran > marker.txt')] })
      const [r] = results(run)
      assert.equal(existsSync(join(world.ws, 'marker.txt')), false)
      assert.ok(r.text.includes(ledgerOf(world)), r.text)
      assert.match(r.text, /EPERM|EACCES|EROFS/)
    } finally {
      spawnSync('chattr', ['-i', ledgerOf(world)])
      cleanup(world)
    }
  })

  test('a full disk (ENOSPC on a small tmpfs): the call does not run', async (t) => {
    const world = makeWorld('ledger-full')
    const disk = join(world.root, 'disk')
    mkdirSync(disk)
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk])
    if (mounted.status !== 0) {
      cleanup(world)
      t.skip(`cannot mount a tmpfs here: ${mounted.stderr}`)
      return
    }
    try {
      writeFileSync(join(disk, 'filler'), Buffer.alloc(60 * 1024))
      // Fill what is left to the last block.
      try { writeFileSync(join(disk, 'filler2'), Buffer.alloc(64 * 1024)) } catch {}
      const auditFile = join(disk, 'audit.ndjson')
      configure(world, { auditFile })
      const run = await runDsh(world, { script: [bash('echo ran > marker.txt')] })
      const [r] = results(run)
      assert.equal(existsSync(join(world.ws, 'marker.txt')), false)
      assert.ok(r.text.includes(auditFile), r.text)
      assert.match(r.text, /ENOSPC/)
    } finally {
      spawnSync('umount', [disk])
      cleanup(world)
    }
  })

  test('auditFailure: warn runs the call, and the warning is in its result and in /allow status, every time', async () => {
    const world = makeWorld('ledger-warn', { allowConfig: { auditFailure: 'warn' } })
    mkdirSync(ledgerOf(world))
    const faults = injector(world, { 2: [{ command: '/allow status' }] })
    try {
      const run = await runDsh(world, { script: [bash('echo one > one.txt'), bash('echo two > two.txt')], plugins: [faults.plugin] })
      const r = results(run)
      assert.equal(r.length, 2, run.stdout + run.stderr)
      assert.ok(existsSync(join(world.ws, 'one.txt')) && existsSync(join(world.ws, 'two.txt')))
      for (const x of r) {
        assert.match(x.text, /audit ledger/)
        assert.ok(x.text.includes(ledgerOf(world)), x.text)
      }
      const status = readLog(faults.log).find((e) => e.action.command)
      assert.ok(commandText(status).includes(ledgerOf(world)), commandText(status))
      assert.match(commandText(status), /not recorded|could not/)
    } finally {
      cleanup(world)
    }
  })

  test('a half line left by an earlier crash does not swallow the next record', async () => {
    const world = makeWorld('ledger-half')
    writeFileSync(ledgerOf(world), '{"dshAllow":1,"kind":"decision","sessionId":"crashed-sess')
    try {
      const run = await runDsh(world, { script: [bash('cat README.md')] })
      assert.equal(results(run).length, 1)
      const core = await import(join(PKG, 'core', 'index.js'))
      const text = readFileSync(ledgerOf(world), 'utf8')
      const { rows } = core.foldLedger(text, { baseline: true })
      assert.deepEqual(rows.map((x) => x.command), ['cat README.md'])
    } finally {
      cleanup(world)
    }
  })

  test('the row of a call the host then refused to run unconfined (the runner broke mid-session) says it did not run', { skip: !kernel && 'the Landlock runner does not work here' }, async () => {
    const world = makeWorld('ledger-unrun')
    const runner = join(world.profile, 'node_modules', 'dsh-allow', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
    const faults = injector(world, { 1: [{ write: runner, text: '#!/bin/sh\necho "dsh-allow run: broken on purpose" >&2\nexit 125\n' }] })
    try {
      const run = await runDsh(world, { script: [bash('echo one'), bash('echo two > two.txt')], plugins: [faults.plugin] })
      const r = results(run)
      assert.equal(r.length, 2, run.stdout + run.stderr)
      assert.equal(existsSync(join(world.ws, 'two.txt')), false)
      const core = await import(join(PKG, 'core', 'index.js'))
      const { rows } = core.foldLedger(readFileSync(ledgerOf(world), 'utf8'), { baseline: true })
      assert.equal(rows.length, 2)
      assert.equal(rows[0].notRun, undefined)
      assert.match(rows[1].notRun ?? '', /runner/)
    } finally {
      cleanup(world)
    }
  })
})

describe('/ is not a workspace', { skip: missing }, () => {
  test('DSH started in /: no workspace grant (a write anywhere asks), the user is told at session start and in /allow status; a card still works', { skip: !kernel && 'the Landlock runner does not work here' }, async () => {
    const world = makeWorld('root-ws')
    const existing = join(world.root, 'existing.txt')
    writeFileSync(existing, 'before\n')
    try {
      const run = await runDsh(world, {
        cwd: '/',
        script: [bash(`echo hi > ${join(world.root, 'outside.txt')}`), bash(`echo more >> ${existing}`)],
        answers: ['pass', 'once'],
        commands: ['/allow status'],
      })
      const r = results(run)
      assert.equal(r.length, 2, run.stdout + run.stderr)
      assert.equal(existsSync(join(world.root, 'outside.txt')), false, 'written as "inside the workspace"')
      const asked = approvals(run)
      assert.equal(asked.length, 2, 'both writes ask')
      assert.equal(readFileSync(existing, 'utf8'), 'before\nmore\n', 'the card still works')
      const notices = sessionEvents(run, 'user/message').filter((e) => e.data?.source?.plugin === 'dsh-allow')
      assert.equal(notices.length, 1, 'told once, at session start')
      assert.match(JSON.stringify(notices[0].data.content), /not a workspace/)
      assert.match(commandText(run.answerer.find((e) => e.kind === 'command')), /not a workspace/)
    } finally {
      cleanup(world)
    }
  })
})

describe('names with control characters and oversized commands', { skip: missing }, () => {
  test('a path with a newline is shown escaped on the card', async () => {
    const world = makeWorld('control-chars')
    writeFileSync(join(world.ws, 'evil\nname.txt'), 'x')
    try {
      const run = await runDsh(world, { script: [bash("rm $'evil\\nname.txt'")] })
      const [a] = approvals(run)
      assert.ok(a !== undefined, run.stdout + run.stderr)
      assert.ok(!a.reason.includes('\n'), `the card's text is split: ${JSON.stringify(a.reason)}`)
      assert.ok(a.reason.includes('evil\\nname.txt'), a.reason)
    } finally {
      cleanup(world)
    }
  })

  test('a refused 1 MB command is stored cut to a bounded length, with its size', async () => {
    const world = makeWorld('oversized')
    const command = `echo ${'x'.repeat(1024 * 1024)}`
    try {
      const run = await runDsh(world, { script: [bash(command)] })
      const [r] = results(run)
      assert.equal(r.isError, true)
      const lines = readFileSync(ledgerOf(world), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
      assert.equal(lines.length, 1)
      assert.ok(lines[0].command.length <= 4096, `stored ${lines[0].command.length} characters`)
      assert.equal(lines[0].commandBytes, Buffer.byteLength(command))
      const core = await import(join(PKG, 'core', 'index.js'))
      const [row] = core.foldLedger(readFileSync(ledgerOf(world), 'utf8'), {}).rows
      assert.equal(row.commandBytes, Buffer.byteLength(command))
    } finally {
      cleanup(world)
    }
  })
})
