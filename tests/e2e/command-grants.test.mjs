// Command grants in a real DSH process: a fake `lark-cli` installed outside
// the workspace writes its token under ~/.lark-cli with no prompt, because a
// command grant names it — and the kernel still holds it to those roots (its
// write to ~/.ssh fails). A shadow `./lark-cli` in the workspace and another
// program writing ~/.lark-cli get nothing from the grant. We read the files
// on disk, the rules file, the ledger and the session log.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, PKG, results, runDsh, runnerWorks } from './harness.mjs'

const missing = missingPrerequisite()
const kernel = missing === undefined && runnerWorks()
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const NO_CHANNEL = 'tool "bash" requires approval, but no approval channel is available'

// The stand-in CLI: its own state (the token), an export into the working
// folder, and a write it has no business doing. Each line reports itself.
const LARK_CLI = [
  '#!/bin/sh',
  'echo "token-$1" > "$HOME/.lark-cli/token" && echo token-written',
  'echo export > ./lark-export.txt && echo export-written',
  'echo stray > "$HOME/.ssh/x" && echo ssh-written',
  'exit 0',
  '',
].join('\n')

// The workspace shadow: same name, its own writes.
const SHADOW = [
  '#!/bin/sh',
  'echo shadow > "$HOME/.lark-cli/shadow" && echo shadow-token-written',
  'echo ran > ./shadow-ran.txt',
  'exit 0',
  '',
].join('\n')

function install(file, text) {
  writeFileSync(file, text)
  chmodSync(file, 0o755)
}

function ledgerLines(world) {
  const file = join(world.dshHome, 'dsh-allow-audit.ndjson')
  if (!existsSync(file)) return { text: '', lines: [] }
  const text = readFileSync(file, 'utf8')
  return { text, lines: text.split('\n').filter(Boolean).map((l) => JSON.parse(l)) }
}

function said(run) {
  return run.answerer.filter((x) => x.kind === 'command').map((x) => x.result?.text ?? x.error ?? '')
}

describe('command grants in a real DSH process', { skip: missing }, () => {
  let world
  let core
  let bin
  before(async () => {
    world = makeWorld('command-grants')
    core = await import(join(PKG, 'core', 'index.js'))
    // Installed the way user CLIs land outside any workspace (npm --prefix,
    // pipx): ~/.local/bin, which the baseline lets programs run from.
    bin = join(world.home, '.local', 'bin')
    mkdirSync(bin, { recursive: true })
    install(join(bin, 'lark-cli'), LARK_CLI)
    world.binDirs = [bin]
    // Landlock fences paths that exist: the CLI's folder is there, as after
    // its first interactive login.
    mkdirSync(join(world.home, '.lark-cli'), { recursive: true })
  })
  after(() => cleanup(world))

  test('/allow command add writes a validated grant; bad fields are named and nothing is written', async () => {
    const run = await runDsh(world, {
      commands: [
        '/allow command add ./lark-cli ~/.lark-cli',
        '/allow command add lark-cli relative/dir',
        '/allow command add lark-cli --shape any',
        '/allow command add lark-cli --shape loose',
        '/allow command add lark-cli ~/.lark-cli',
        '/allow command add lark-cli ~/.lark-cli',
        '/allow command list',
        '/allow list',
      ],
    })
    const out = said(run)
    assert.equal(out.length, 8, JSON.stringify(run.answerer))
    assert.match(out[0], /Not added — command: a bare program name or a fixed absolute path/)
    assert.match(out[1], /Not added — roots\[0\]: an absolute path, ~ or \$HOME/)
    assert.match(out[2], /Not added — shape "any" with \$HOME/)
    assert.match(out[3], /Not added — shape: "strict" or "any"/)
    assert.match(out[4], /Added command grant 1\. lark-cli {2}writes ~\/\.lark-cli {2}\(shape strict\)/)
    assert.doesNotMatch(out[4], /does not exist/)
    assert.match(out[5], /lark-cli already has a command grant \(1\)/)
    assert.match(out[6], /Command grants \(.*dsh-allow\.json\)/)
    assert.match(out[6], /1\. lark-cli {2}writes ~\/\.lark-cli/)
    assert.match(out[7], /No stored rules/)
    assert.match(out[7], /1\. lark-cli {2}writes ~\/\.lark-cli/)

    const file = JSON.parse(run.rulesText)
    assert.equal(file.version, 3)
    assert.deepEqual(file.rules, [])
    assert.equal(file.commands.length, 1, run.rulesText)
    const [grant] = file.commands
    assert.equal(typeof grant.id, 'string')
    assert.deepEqual({ ...grant, id: undefined }, {
      id: undefined, name: 'lark-cli', command: 'lark-cli', roots: ['~/.lark-cli'], shape: 'strict', allowCdPrefix: true,
    })
  })

  test('the model is told about the grant in its system prompt', async () => {
    const run = await runDsh(world, { script: [] })
    const system = run.events.flatMap((e) => JSON.stringify(e).match(/Some programs may write their own state[^"]*/g) ?? [])
    assert.ok(system.length > 0, 'the prompt section reached the model request')
    assert.match(system[0], /`lark-cli` \(writes ~\/\.lark-cli\)/)
  })

  test('the granted program writes its token with no prompt; the kernel still refuses ~/.ssh', { skip: !kernel && 'the Landlock runner does not work here' }, async () => {
    const run = await runDsh(world, {
      script: [
        bash('lark-cli auth'),
        bash(`cd ${world.ws} && lark-cli again 2>&1 | tail -5`),
      ],
      answers: [],
    })
    const r = results(run)
    assert.equal(r.length, 2, run.stdout + run.stderr)
    assert.equal(approvals(run).length, 0, 'no prompt for a granted program')
    assert.match(r[0].text, /token-written/)
    assert.match(r[0].text, /export-written/)
    assert.doesNotMatch(r[0].text, /ssh-written/)
    // Outside the writable roots the runner's read-only tree answers first.
    assert.match(r[0].text, /Permission denied|Read-only file system/)
    assert.equal(readFileSync(join(world.home, '.lark-cli', 'token'), 'utf8'), 'token-again\n')
    assert.equal(readFileSync(join(world.ws, 'lark-export.txt'), 'utf8'), 'export\n')
    assert.equal(existsSync(join(world.home, '.ssh', 'x')), false, 'the kernel kept the program out of ~/.ssh')
    assert.match(r[1].text, /token-written/)

    // The ledger: allowed by a rule, naming the command grant and its root.
    const { text, lines } = ledgerLines(world)
    const rows = lines.filter((l) => l.kind === 'decision' && /lark-cli (auth|again)/.test(l.command))
    assert.equal(rows.length, 2, text)
    for (const row of rows) {
      assert.equal(row.decision, 'allow')
      assert.equal(row.source, 'rule')
      assert.equal(row.commandGrant, 'lark-cli')
      assert.match(row.reason, /command grant lark-cli/)
      assert.ok(row.rules.some((x) => x.path === join(world.home, '.lark-cli') && x.access.write && x.access.create && !x.access.delete), JSON.stringify(row.rules))
    }
    const folded = core.foldLedger(text, { sessionId: rows[0].sessionId }).rows
    assert.deepEqual(folded.map((x) => [x.command, x.source, x.commandGrant]), [
      ['lark-cli auth', 'rule', 'lark-cli'],
      [`cd ${world.ws} && lark-cli again 2>&1 | tail -5`, 'rule', 'lark-cli'],
    ])
  })

  test('a shadow ./lark-cli in the workspace does not match: it runs as any workspace program, and the kernel keeps it out of ~/.lark-cli', { skip: !kernel && 'the Landlock runner does not work here' }, async () => {
    install(join(world.ws, 'lark-cli'), SHADOW)
    const run = await runDsh(world, { script: [bash('./lark-cli auth')], answers: [] })
    const [r] = results(run)
    assert.ok(r, run.stdout + run.stderr)
    assert.doesNotMatch(r.text, /shadow-token-written/)
    assert.equal(existsSync(join(world.home, '.lark-cli', 'shadow')), false, 'nothing of the shadow reached ~/.lark-cli')
    assert.equal(readFileSync(join(world.ws, 'shadow-ran.txt'), 'utf8'), 'ran\n', 'it did run, inside the workspace')
    const [row] = ledgerLines(world).lines.filter((l) => l.kind === 'decision' && l.command === './lark-cli auth')
    assert.equal(row.commandGrant, undefined)
    assert.notEqual(row.source, 'rule')
  })

  test('another program writing ~/.lark-cli asks (and headless, nothing is written)', async () => {
    const run = await runDsh(world, { script: [bash('touch ~/.lark-cli/other')], answers: [] })
    const [r] = results(run)
    assert.equal(r.isError, true)
    assert.ok(r.text.includes(NO_CHANNEL), r.text)
    const [a] = approvals(run)
    assert.match(a.reason, /^dsh-allow: create .*\/\.lark-cli\/other/)
    assert.equal(existsSync(join(world.home, '.lark-cli', 'other')), false)
    const [row] = ledgerLines(world).lines.filter((l) => l.kind === 'decision' && l.command === 'touch ~/.lark-cli/other')
    assert.equal(row.decision, 'prompt')
    assert.equal(row.commandGrant, undefined)
  })

  test('a grant whose root does not exist is not applied, and the ledger row says the fence cannot carry it', { skip: !kernel && 'the Landlock runner does not work here' }, async () => {
    install(join(bin, 'notes-cli'), '#!/bin/sh\necho state > "$HOME/.notes-cli/state" && echo state-written\nexit 0\n')
    const add = await runDsh(world, { commands: ['/allow command add notes-cli ~/.notes-cli'] })
    assert.match(said(add)[0], /Added command grant 2\. notes-cli[\s\S]*~\/\.notes-cli does not exist yet/)
    const run = await runDsh(world, { script: [bash('notes-cli sync')], answers: [] })
    const [r] = results(run)
    assert.ok(r, run.stdout + run.stderr)
    assert.doesNotMatch(r.text, /state-written/)
    assert.equal(existsSync(join(world.home, '.notes-cli')), false)
    const [row] = ledgerLines(world).lines.filter((l) => l.kind === 'decision' && l.command === 'notes-cli sync')
    assert.equal(row.commandGrant, undefined)
    assert.match(row.reason, /command grant notes-cli: root .*\/\.notes-cli does not exist, so the fence cannot carry it/)
  })

  test('/allow command in Chinese; remove takes the grant out and the program loses its roots', async () => {
    const zh = await runDsh(world, { prompt: '请列出命令授权', commands: ['/allow command list', '/allow command remove 3', '/allow command remove 2', '/allow command remove 1'] })
    const out = said(zh)
    assert.match(out[0], /命令授权/)
    assert.match(out[0], /1\. lark-cli {2}可写 ~\/\.lark-cli/)
    assert.match(out[1], /没有第 3 条命令授权/)
    assert.match(out[2], /已删除命令授权 2\. notes-cli/)
    assert.match(out[3], /已删除命令授权 1\. lark-cli/)
    assert.deepEqual(JSON.parse(zh.rulesText).commands ?? [], [])
    // Without the grant, the same program gets no roots: the kernel keeps the token as it was.
    if (!kernel) return
    const run = await runDsh(world, { script: [bash('lark-cli after')], answers: [] })
    assert.ok(results(run)[0], run.stdout + run.stderr)
    assert.doesNotMatch(results(run)[0].text, /token-written/)
    assert.equal(readFileSync(join(world.home, '.lark-cli', 'token'), 'utf8'), 'token-again\n')
  })
})

describe('promptHint: false', { skip: missing }, () => {
  let world
  before(() => {
    world = makeWorld('no-prompt-hint', { allowConfig: { promptHint: false } })
    writeFileSync(world.rulesFile, JSON.stringify({ version: 3, rules: [], commands: [{ command: 'lark-cli', roots: ['~/.lark-cli'] }] }))
  })
  after(() => cleanup(world))

  test('no command grants section reaches the model', async () => {
    const run = await runDsh(world, { script: [] })
    assert.ok(run.events.length > 0, run.stdout + run.stderr)
    assert.equal(JSON.stringify(run.events).includes('Some programs may write their own state'), false)
  })
})
