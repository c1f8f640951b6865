// The Approvals tab's tail reader: fixed-size chunks from the end, lines
// stitched across chunk boundaries, at most 4 MiB and 500 rows, the session
// filter, and zero bytes read when nothing was written since the last ask.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ledgerRecord } from '../../plugin/ledger.js'
import { LedgerTail, MAX_BYTES, sessionMarker } from '../../plugin/tail.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const core = await import(join(ROOT, 'pkg', 'core', 'index.js'))

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-tail-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** One ledger line, exactly as the writer spells it. */
function line(session, call, { decision = 'allow', command = `cat file-${call}`, tier = 'baseline' } = {}) {
  const rec = ledgerRecord({
    kind: 'decision', time: `2026-12-02T10:00:00.000Z`, sessionId: session, callId: call, tool: 'bash', command, cwd: '/w',
    mode: 'workspace-write', decision, effects: [{ path: '/w/x', capability: 'read', granted: true, tier }], missing: [], reason: 'r',
  }, (s) => s)
  return `${JSON.stringify(rec)}\n`
}

function answer(session, call, outcome = 'rejected') {
  return `${JSON.stringify(ledgerRecord({ kind: 'human', time: 't', sessionId: session, callId: call, outcome }, (s) => s))}\n`
}

/** What a naive whole-file reader keeps for a session: the reference. */
function naive(text, sessionId) {
  const marker = sessionMarker(sessionId)
  return text.split('\n').filter((l) => l.trim() !== '' && l.includes(marker))
}

test('lines are stitched across chunk boundaries, whatever the chunk size (multi-byte text too)', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  let text = ''
  for (let i = 0; i < 240; i++) {
    const session = i % 3 === 0 ? 'other' : 's1'
    const command = i % 5 === 0 ? `rm -rf 构建目录-${'é'.repeat(i % 17)}` : `cat ${'x'.repeat((i * 37) % 211)}`
    text += line(session, `c${i}`, { command })
    if (i % 7 === 0) text += answer(session, `c${i}`)
  }
  writeFileSync(file, text)
  const expected = naive(text, 's1')
  for (const chunkBytes of [1, 7, 64, 97, 256, 1000, 4096, 1 << 20]) {
    const tail = new LedgerTail(file, core, { chunkBytes })
    const w = tail.window('s1')
    assert.deepEqual(w.lines, expected, `chunk ${chunkBytes}`)
    assert.equal(w.truncated, false)
    const folded = tail.read({ sessionId: 's1', baseline: true })
    assert.equal(folded.skipped, 0, `chunk ${chunkBytes}: every kept line folds`)
    assert.equal(folded.rows.length, 160)
  }
})

test('a ledger over 4 MiB: the reader reads at most 4 MiB from the end and keeps the newest rows', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  // Mostly other sessions, so 500 rows of ours are not found before 4 MiB.
  let text = ''
  let i = 0
  const pad = 'y'.repeat(900)
  while (text.length < 6 * 1024 * 1024) {
    text += line(i % 25 === 0 ? 's1' : `busy-${i % 4}`, `c${i}`, { command: `cat ${pad}` })
    i += 1
  }
  writeFileSync(file, text)
  const size = statSync(file).size
  assert.ok(size > MAX_BYTES + 1024 * 1024, `fixture is ${size} bytes`)

  const tail = new LedgerTail(file, core)
  const started = performance.now()
  const folded = tail.read({ sessionId: 's1', baseline: true })
  const took = performance.now() - started
  t.diagnostic(`tail read + fold of a ${(size / 1048576).toFixed(1)} MiB ledger: ${took.toFixed(1)} ms, ${tail.bytesRead} bytes read, ${folded.rows.length} rows`)
  assert.ok(tail.bytesRead <= MAX_BYTES + 64 * 1024, `read ${tail.bytesRead} bytes`)
  assert.equal(folded.truncated, true)
  // The rows are the newest of the session, in file order, ending with its last call.
  const ours = naive(text, 's1').map((l) => JSON.parse(l).callId)
  const got = folded.rows.map((r) => r.callId)
  assert.ok(got.length > 100 && got.length < ours.length, `${got.length} rows of ${ours.length}`)
  assert.deepEqual(got, ours.slice(ours.length - got.length))
})

test('at most 500 rows, and the read stops once the newest 500 are in', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  let text = ''
  for (let i = 0; i < 3000; i++) text += line('s1', `c${i}`)
  writeFileSync(file, text)
  const tail = new LedgerTail(file, core)
  const folded = tail.read({ sessionId: 's1', limit: 10_000, baseline: true })
  assert.equal(folded.rows.length, 500)
  assert.equal(folded.rows[0].callId, 'c2500')
  assert.equal(folded.rows.at(-1).callId, 'c2999')
  assert.ok(tail.bytesRead < statSync(file).size / 2, `read ${tail.bytesRead} of ${statSync(file).size} bytes`)
  assert.equal(tail.read({ sessionId: 's1', limit: 20, baseline: true }).rows[0].callId, 'c2980')
})

test('asking again without new writes reads zero bytes; an append reads only the new bytes', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  let text = ''
  for (let i = 0; i < 400; i++) text += line(i % 2 ? 's1' : 's2', `c${i}`)
  writeFileSync(file, text)
  const tail = new LedgerTail(file, core)
  const first = tail.read({ sessionId: 's1', baseline: true })
  const after = tail.bytesRead
  assert.ok(after > 0)
  const again = tail.read({ sessionId: 's1', baseline: true })
  assert.equal(tail.bytesRead, after, 'an unchanged file reads zero bytes')
  assert.deepEqual(again.rows, first.rows)

  const more = line('s1', 'fresh', { decision: 'prompt' }) + answer('s1', 'fresh', 'allowed-once')
  appendFileSync(file, more)
  const grown = tail.read({ sessionId: 's1', baseline: true })
  assert.equal(tail.bytesRead - after, Buffer.byteLength(more), 'only the appended bytes are read')
  assert.equal(grown.rows.at(-1).callId, 'fresh')
  assert.equal(grown.rows.at(-1).source, 'human')
  assert.equal(grown.rows.length, first.rows.length + 1)
})

test('a line still being written is left out until it is whole', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  const whole = line('s1', 'a')
  const next = line('s1', 'b')
  writeFileSync(file, whole + next.slice(0, 40))
  const tail = new LedgerTail(file, core, { chunkBytes: 16 })
  assert.deepEqual(tail.read({ sessionId: 's1', baseline: true }).rows.map((r) => r.callId), ['a'])
  appendFileSync(file, next.slice(40))
  assert.deepEqual(tail.read({ sessionId: 's1', baseline: true }).rows.map((r) => r.callId), ['a', 'b'])
})

test('sessions are kept apart, and a missing ledger is simply empty', (t) => {
  const dir = scratch(t)
  const file = join(dir, 'audit.ndjson')
  const tail = new LedgerTail(file, core)
  assert.deepEqual(tail.read({ sessionId: 's1' }).rows, [])
  writeFileSync(file, line('s1', 'mine', { tier: 'rule' }) + line('s10', 'prefix-lookalike', { tier: 'rule' }) + line('s2', 'theirs', { tier: 'rule' }))
  assert.deepEqual(tail.read({ sessionId: 's1' }).rows.map((r) => r.callId), ['mine'])
  assert.deepEqual(tail.read({}).rows.map((r) => r.callId), ['mine', 'prefix-lookalike', 'theirs'])
})

test('a replaced or truncated ledger is read afresh', (t) => {
  const file = join(scratch(t), 'audit.ndjson')
  writeFileSync(file, line('s1', 'old-1') + line('s1', 'old-2'))
  const tail = new LedgerTail(file, core)
  assert.equal(tail.read({ sessionId: 's1', baseline: true }).rows.length, 2)
  writeFileSync(file, line('s1', 'new'))
  assert.deepEqual(tail.read({ sessionId: 's1', baseline: true }).rows.map((r) => r.callId), ['new'])
})
