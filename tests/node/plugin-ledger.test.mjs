// The audit ledger's writer: the record shape the core folds, redaction
// before anything reaches the disk, whole lines under concurrent writers,
// and `audit: false`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, existsSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { KEPT_COMMAND_CHARS, appendLine, createLedger, ledgerRecord, lostRecordText, sourceOf } from '../../plugin/ledger.js'
import { shown } from '../../plugin/text.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const core = await import(join(ROOT, 'pkg', 'core', 'index.js'))

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-ledger-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const decision = (over = {}) => ({
  kind: 'decision', time: '2026-12-02T10:00:00.000Z', sessionId: 's1', callId: 'c1', tool: 'bash',
  command: 'rm -rf build', cwd: '/w', mode: 'workspace-write', decision: 'prompt',
  effects: [{ path: '/w/build', capability: 'delete', granted: false, refused: false, tier: 'default' }],
  missing: [{ path: '/w/build', capability: 'delete' }], reason: 'delete is not granted on /w/build', rules: [],
  ...over,
})

test('a prompt is written as a policy decision naming what is missing', () => {
  const line = ledgerRecord(decision(), (s) => s)
  assert.deepEqual(Object.keys(line).slice(0, 4), ['dshAllow', 'kind', 'sessionId', 'callId'])
  assert.equal(line.dshAllow, 1)
  assert.equal(line.source, 'policy')
  assert.deepEqual(line.missing, [{ path: '/w/build', capability: 'delete' }])
})

test('what the kernel carries wider than the card names is kept on the decision and on an Allow once', () => {
  const widened = ['`~/x/link` does not exist yet and the kernel can only name what exists: this one command may also create other entries in `~/x`']
  assert.deepEqual(ledgerRecord(decision({ widened }), (s) => s).widened, widened)
  assert.equal(ledgerRecord(decision(), (s) => s).widened, undefined, 'none: no field')
  const answer = ledgerRecord({ kind: 'human', time: 't', sessionId: 's1', callId: 'c1', outcome: 'allowed-once', widened }, (s) => s)
  assert.equal(answer.action, 'allow-once')
  assert.deepEqual(answer.widened, widened)
})

test('who allowed: a stored rule or grant is `rule`, anything else that allows is `baseline`', () => {
  const byRule = decision({
    decision: 'allow',
    effects: [{ path: '/w/build', capability: 'delete', granted: true, tier: 'rule', ruleId: 'r1' }],
    rules: [{ id: 'r1', path: '/w/build', recursive: true, access: { delete: true, read: false } }],
  })
  assert.equal(sourceOf(byRule), 'rule')
  assert.deepEqual(ledgerRecord(byRule, (s) => s).rules, [{ path: '/w/build', recursive: true, access: { delete: true } }])
  const byBaseline = decision({ decision: 'allow', effects: [{ path: '/w/README.md', capability: 'read', granted: true, tier: 'baseline' }] })
  assert.equal(sourceOf(byBaseline), 'baseline')
  assert.equal(sourceOf(decision({ decision: 'refuse' })), 'policy')
})

test('inline code the kernel fence bounded is decided by the fence; without a fence it is the baseline', () => {
  const opaque = (fenced) => decision({
    decision: 'allow', command: "python3 -c 'print(1)'", effects: [{ path: '/usr/bin/python3', capability: 'execute', granted: true, tier: 'baseline' }],
    unknown: [{ reason: 'inline code', bounded: true }], fenced,
  })
  assert.equal(sourceOf(opaque(true)), 'fence')
  assert.equal(ledgerRecord(opaque(true), (s) => s).source, 'fence')
  // In a folder granting all five (a temp dir) nothing needed the fence.
  assert.equal(sourceOf(opaque(false)), 'baseline')
})

test('what the kernel denied after the call ran is its own line, folded into the call\'s row', () => {
  const kernel = ledgerRecord({ kind: 'kernel', time: 't', sessionId: 's1', callId: 'c1', denied: [{ path: '/h/.ssh/id_ed25519', capability: 'read' }, { path: '' }] }, (s) => s)
  assert.deepEqual(kernel.denied, [{ path: '/h/.ssh/id_ed25519', capability: 'read' }])
  assert.equal(ledgerRecord({ kind: 'kernel', sessionId: 's1', callId: 'c1', denied: [] }, (s) => s), undefined)
  const text = [JSON.stringify(ledgerRecord(decision({ decision: 'allow', unknown: [{ reason: 'inline', bounded: true }], fenced: true, effects: [] }), (s) => s)), JSON.stringify(kernel)].join('\n')
  const folded = core.foldLedger(text, { sessionId: 's1' })
  assert.equal(folded.rows.length, 1)
  assert.equal(folded.rows[0].source, 'fence')
  assert.deepEqual(folded.rows[0].kernel, [{ path: '/h/.ssh/id_ed25519', capability: 'read' }])
  // What the runner named keeps its system call and program, folded as written.
  const named = ledgerRecord({ kind: 'kernel', time: 't', sessionId: 's1', callId: 'c1', denied: [{ path: '/w/app.db-journal', capability: 'delete', operation: 'unlink', program: 'sqlite3', extra: 'x' }] }, (s) => s)
  assert.deepEqual(named.denied, [{ path: '/w/app.db-journal', capability: 'delete', operation: 'unlink', program: 'sqlite3' }])
  const row = core.foldLedger([JSON.stringify(ledgerRecord(decision({ decision: 'allow', effects: [] }), (s) => s)), JSON.stringify(named)].join('\n'), { sessionId: 's1' }).rows[0]
  assert.deepEqual(row.kernel, [{ path: '/w/app.db-journal', capability: 'delete', operation: 'unlink', program: 'sqlite3' }])
})

test('a refusal of the write tool names the protected path', () => {
  const line = ledgerRecord({ kind: 'decision', time: 't', sessionId: 's1', callId: 'c9', tool: 'write', decision: 'refuse', path: '/h/dsh-allow.json', tier: 'protected' }, (s) => s)
  assert.equal(line.command, 'write /h/dsh-allow.json')
  assert.deepEqual(line.missing, [{ path: '/h/dsh-allow.json', capability: 'write' }])
})

test('human answers: Always allow names the stored rules, the rest map onto the ledger vocabulary', () => {
  const human = (outcome, always) => ledgerRecord({ kind: 'human', time: 't', sessionId: 's1', callId: 'c1', tool: 'bash', outcome, always }, (s) => s)
  const always = human('allowed-once', [{ id: 'x', path: '/w/build', recursive: true, access: { delete: true }, hits: 0 }])
  assert.equal(always.action, 'always-allow')
  assert.deepEqual(always.stored, [{ path: '/w/build', recursive: true, access: { delete: true } }])
  assert.deepEqual(['allowed-once', 'rejected', 'cancelled', 'unavailable'].map((o) => human(o).action),
    ['allow-once', 'deny', 'cancelled', 'unavailable'])
  assert.equal(ledgerRecord({ kind: 'human', callId: 'c1', outcome: 'rejected' }, (s) => s), undefined, 'no session, no line')
})

test('a prompt and its human answer fold into one human row in the core', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  const ledger = createLedger({ auditFile: file }, { redact: core.redact })
  ledger.append(decision())
  ledger.append({ kind: 'human', time: 't', sessionId: 's1', callId: 'c1', tool: 'bash', outcome: 'rejected' })
  const { rows } = core.foldLedger(readFileSync(file, 'utf8'), { sessionId: 's1' })
  assert.equal(rows.length, 1)
  assert.equal(rows[0].source, 'human')
  assert.equal(rows[0].outcome, 'denied')
})

test('secrets in commands never reach the file', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  const ledger = createLedger({ auditFile: file }, { redact: core.redact })
  ledger.append(decision({ command: 'curl -H "Authorization: Bearer sk-live-123456" https://x?token=abc; PASSWORD=hunter2 ./deploy' }))
  const text = readFileSync(file, 'utf8')
  for (const secret of ['sk-live-123456', 'token=abc', 'hunter2']) assert.ok(!text.includes(secret), `${secret} leaked: ${text}`)
  assert.match(text, /\[REDACTED\]/)
})

test('the ledger file is created private, in a private folder', (t) => {
  const file = join(scratch(t), 'home', 'audit.ndjson')
  appendLine(file, '{"x":1}')
  assert.equal(statSync(file).mode & 0o777, 0o600)
  assert.equal(statSync(join(file, '..')).mode & 0o777, 0o700)
})

test('audit: false writes nothing, and records are still published', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  const seen = []
  const ledger = createLedger({ auditFile: file, audit: false }, { redact: core.redact, publish: (r) => seen.push(r) })
  ledger.append(decision())
  assert.equal(existsSync(file), false)
  assert.equal(seen.length, 1)
})

test('a failed write is returned to the gate (and reported), never thrown; the call and /allow status can say what was lost', (t) => {
  const dir = scratch(t)
  const errors = []
  const ledger = createLedger({ auditFile: dir }, { redact: core.redact, onError: (e) => errors.push(e) })
  const lost = ledger.append(decision())
  assert.equal(errors.length, 1)
  assert.equal(lost.file, dir)
  assert.equal(lost.code, 'EISDIR')
  assert.equal(ledger.failure, 'refuse', 'refuse is the default')
  assert.deepEqual(ledger.lostFor('c1'), lost)
  assert.equal(ledger.health().lost, 1)
  assert.match(lostRecordText(lost, 'refused'), new RegExp(`nothing ran .*${dir}.*EISDIR`))
  ledger.forget('c1')
  assert.equal(ledger.lostFor('c1'), undefined)
  assert.equal(createLedger({ auditFile: dir, auditFailure: 'warn' }).failure, 'warn')
})

test('a half line left by a crash is ended first, so the next record is whole', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  writeFileSync(file, '{"dshAllow":1,"kind":"decision","sessionId":"s0')
  assert.equal(createLedger({ auditFile: file }, { redact: core.redact }).append(decision()), undefined)
  const lines = readFileSync(file, 'utf8').split('\n')
  assert.equal(lines.length, 3)
  assert.equal(JSON.parse(lines[1]).callId, 'c1')
  assert.equal(core.foldLedger(readFileSync(file, 'utf8'), { sessionId: 's1' }).rows.length, 1)
})

test('a command past the core\'s 64 KiB limit is kept as its start and its size; shorter ones whole', () => {
  const long = `echo ${'é'.repeat(40_000)}`
  const line = ledgerRecord(decision({ command: long, decision: 'refuse' }), core.redact)
  assert.equal(line.command, long.slice(0, KEPT_COMMAND_CHARS))
  assert.equal(line.commandBytes, Buffer.byteLength(long))
  const short = ledgerRecord(decision({ command: 'echo hi' }), core.redact)
  assert.equal(short.command, 'echo hi')
  assert.equal('commandBytes' in short, false)
})

test('control characters are shown escaped, as bash writes them; a backslash stays', () => {
  assert.equal(shown('a\nb\tc\x1b[31m\u202etxt.exe\\n'), 'a\\nb\\tc\\e[31m\\u202etxt.exe\\n')
  assert.equal(shown('plain 路径'), 'plain 路径')
})

test('concurrent writers in several processes never interleave inside a line', async (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  const writers = 4
  const lines = 300
  const script = `
    import { appendLine } from ${JSON.stringify(join(ROOT, 'plugin', 'ledger.js'))}
    const pad = 'x'.repeat(6000)
    for (let i = 0; i < ${lines}; i++) appendLine(process.argv[1], JSON.stringify({ w: process.argv[2], i, pad }))
  `
  await Promise.all(Array.from({ length: writers }, (_, w) => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, file, String(w)], { stdio: 'inherit' })
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${w} exited ${code}`))))
  })))
  const all = readFileSync(file, 'utf8').split('\n').filter(Boolean)
  assert.equal(all.length, writers * lines)
  const seen = new Set()
  for (const l of all) {
    const v = JSON.parse(l)
    assert.equal(v.pad.length, 6000)
    seen.add(`${v.w}/${v.i}`)
  }
  assert.equal(seen.size, writers * lines)
})
