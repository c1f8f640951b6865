// The Approvals tab's read path in Node: tail-read + fold of a ledger over
// 4 MiB (plugin/tail.js + the core's foldLedger), cold (a fresh reader),
// unchanged (the cached window: zero bytes read) and after one append.
// Three shapes: one busy session (the read stops at 500 rows), the asked
// session a small share of many (the read stops at 4 MiB), and a fold of
// exactly 500 rows. Run after `bash scripts/build.sh`:  node benches/ledger.mjs
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const core = await import(join(here, '..', 'pkg', 'core', 'index.js'))
const { ledgerRecord } = await import(join(here, '..', 'plugin', 'ledger.js'))
const { LedgerTail } = await import(join(here, '..', 'plugin', 'tail.js'))

const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-ledger-bench-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

function decision(session, call, i) {
  const allow = i % 4 !== 0
  return `${JSON.stringify(ledgerRecord({
    kind: 'decision', time: new Date(1_700_000_000_000 + i * 1000).toISOString(), sessionId: session, callId: call, tool: 'bash',
    command: `rm -rf build-${i} && cat src/file-${i}.rs | grep -n pattern`, cwd: '/home/me/project', mode: 'workspace-write',
    decision: allow ? 'allow' : 'prompt',
    effects: [{ path: `/home/me/project/build-${i}`, capability: 'delete', granted: allow, tier: allow ? 'rule' : 'default', ruleId: 'r1' }],
    missing: allow ? [] : [{ path: `/home/me/project/build-${i}`, capability: 'delete' }],
    reason: allow ? 'allowed by a stored rule' : `delete is not granted on /home/me/project/build-${i}`,
    rules: allow ? [{ id: 'r1', path: '/home/me/project', recursive: true, access: { delete: true } }] : [],
  }, (s) => s))}\n`
}

function answer(session, call) {
  return `${JSON.stringify(ledgerRecord({ kind: 'human', time: 't', sessionId: session, callId: call, outcome: 'allowed-once' }, (s) => s))}\n`
}

function ledger(name, sessionOf, bytes) {
  const file = join(dir, name)
  let text = ''
  for (let i = 0; text.length < bytes; i++) {
    const s = sessionOf(i)
    text += decision(s, `c${i}`, i)
    if (i % 4 === 0) text += answer(s, `c${i}`)
  }
  writeFileSync(file, text)
  return file
}

function median(samples) {
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]
}

function measure(label, file, sessionId) {
  const size = statSync(file).size
  const cold = []
  let rows = 0
  let bytes = 0
  for (let k = 0; k < 15; k++) {
    const tail = new LedgerTail(file, core)
    const t0 = performance.now()
    rows = tail.read({ sessionId, limit: 500 }).rows.length
    cold.push(performance.now() - t0)
    bytes = tail.bytesRead
  }
  const tail = new LedgerTail(file, core)
  tail.read({ sessionId, limit: 500 })
  const before = tail.bytesRead
  const warm = []
  for (let k = 0; k < 50; k++) {
    const t0 = performance.now()
    tail.read({ sessionId, limit: 500 })
    warm.push(performance.now() - t0)
  }
  const unchangedBytes = tail.bytesRead - before
  const grown = []
  for (let k = 0; k < 15; k++) {
    appendFileSync(file, decision(sessionId, `late-${k}`, k))
    const t0 = performance.now()
    tail.read({ sessionId, limit: 500 })
    grown.push(performance.now() - t0)
  }
  console.log(`${label}: ${(size / 1048576).toFixed(1)} MiB ledger, ${rows} rows, ${(bytes / 1048576).toFixed(2)} MiB read cold`)
  console.log(`  cold tail-read + fold   median ${median(cold).toFixed(2)} ms`)
  console.log(`  unchanged (cached)      median ${median(warm).toFixed(3)} ms, ${unchangedBytes} bytes read over 50 asks`)
  console.log(`  after one append        median ${median(grown).toFixed(2)} ms`)
}

console.log(`dsh-allow ${core.version()} in Node ${process.version}`)
measure('one busy session', ledger('one.ndjson', () => 'main', 5 * 1024 * 1024), 'main')
measure('one session of twenty', ledger('many.ndjson', (i) => `s${i % 20}`, 5 * 1024 * 1024), 's7')

let text = ''
for (let i = 0; i < 500; i++) text += decision('s', `c${i}`, i) + (i % 4 === 0 ? answer('s', `c${i}`) : '')
const fold = []
for (let k = 0; k < 30; k++) {
  const t0 = performance.now()
  core.foldLedger(text, { sessionId: 's', limit: 500, baseline: true })
  fold.push(performance.now() - t0)
}
console.log(`foldLedger of 500 rows (${(text.length / 1024).toFixed(0)} KiB): median ${median(fold).toFixed(2)} ms`)
