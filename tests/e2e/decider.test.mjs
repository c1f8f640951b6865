// The decider the gate and the guard share (plugin/gate.js makeDecider): the
// guard's decide right after the gate takes the gate's answer only for the
// same call, the same request, and no tool call ended in between. The
// plugin as installed in a DSH profile (it imports the host's packages),
// the real core on a real workspace; the count is of the core's decides.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { cleanup, makeWorld, missingPrerequisite } from './harness.mjs'

const skip = missingPrerequisite() ?? false
let installed, core, makeDecider, RulesStore
before(async () => {
  if (skip) return
  installed = makeWorld('decider')
  const at = (rel) => pathToFileURL(join(installed.profile, 'node_modules', 'dsh-allow', rel)).href
  core = await import(at('core/index.js'))
  ;({ makeDecider } = await import(at('plugin/gate.js')))
  ;({ RulesStore } = await import(at('plugin/store.js')))
})
after(() => installed && cleanup(installed))

/** A workspace outside the temp folders (the baseline opens those fully). */
function world() {
  const root = realpathSync(mkdtempSync(join(installed.root, 'decider-')))
  const ws = join(root, 'ws')
  mkdirSync(join(root, 'home', '.dsh'), { recursive: true })
  mkdirSync(join(root, 'elsewhere'))
  writeFileSync(join(root, 'elsewhere', 'secret'), 'x')
  mkdirSync(ws)
  writeFileSync(join(ws, 'notes.md'), 'x')
  let decides = 0
  const counted = { decide: (request, host) => ((decides += 1), core.decide(request, host)) }
  const decide = makeDecider({
    core: counted,
    host: core.nodeHost,
    store: new RulesStore(join(root, 'home', '.dsh', 'dsh-allow.json'), core),
    fence: { current: () => undefined },
    settings: { platform: 'linux', home: join(root, 'home'), harnessHome: join(root, 'home', '.dsh'), grants: [] },
    policyOf: () => ({ mode: 'workspace-write', workspaceRoot: ws }),
    protectedFiles: () => [],
  })
  const call = (callId, command) => ({ callId, name: 'bash', arguments: { command }, agent: { session: { id: 's', header: { cwd: ws } } } })
  return { root, ws, decide, call, decides: () => decides, done: () => rmSync(root, { recursive: true, force: true }) }
}

test('the guard takes the gate\'s answer for the same call and request', { skip }, () => {
  const w = world()
  const exec = w.call('c1', 'cat notes.md')
  const gate = w.decide(exec)
  const guard = w.decide(exec)
  assert.equal(w.decides(), 1)
  assert.equal(guard.decision, gate.decision)
  w.done()
})

test('another call, or the same call with a one-shot grant, is decided afresh', { skip }, () => {
  const w = world()
  w.decide(w.call('c1', 'cat notes.md'))
  w.decide(w.call('c2', 'cat notes.md'))
  assert.equal(w.decides(), 2)
  const grant = { id: 'g', path: join(w.root, 'elsewhere'), recursive: true, access: { read: true } }
  w.decide(w.call('c2', 'cat notes.md'), [grant])
  assert.equal(w.decides(), 3)
  w.done()
})

test('once a tool call has ended, the same request is decided again on the disk as it is now', { skip }, () => {
  const w = world()
  const exec = w.call('c1', 'cat notes.md')
  assert.equal(w.decide(exec).decision.decision, 'allow')
  // What a tool call might do meanwhile: the file becomes a link out of the workspace.
  rmSync(join(w.ws, 'notes.md'))
  symlinkSync(join(w.root, 'elsewhere', 'secret'), join(w.ws, 'notes.md'))
  core.invalidate()
  w.decide.toolCallEnded()
  const again = w.decide(exec)
  assert.equal(w.decides(), 2)
  assert.equal(again.decision.decision, 'prompt', JSON.stringify(again.decision.effects))
  w.done()
})
