// The one removal Landlock cannot express, finished by the host: only a
// granted delete, only after the kernel refused something in that run, only
// an empty folder (or a file under a rule for that file), never anything else.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { completeRemovals, pendingRemovals } from '../../plugin/removal.js'

const LINUX = { platform: 'linux', fenced: true }
const denied = { kind: 'foreground', exitCode: 1, sandbox: { mode: 'workspace-write', denied: true, enforcement: 'partial' } }

function world(t) {
  const w = mkdtempSync(join(tmpdir(), 'dsh-allow-removal-'))
  t.after(() => rmSync(w, { recursive: true, force: true }))
  return w
}

/** The decision a call ran under: one granted delete of `path`, plus `extra` effects. */
function ranUnder(path, { tier = 'rule', rule = { id: 'r1', path, recursive: true, access: { delete: true } }, extra = [], mode = 'workspace-write' } = {}) {
  return {
    mode,
    request: { rules: rule ? [rule] : [], grants: [] },
    decision: {
      decision: 'allow',
      effects: [{ path, capability: 'delete', granted: true, refused: false, tier, ruleId: rule?.id }, ...extra],
    },
  }
}

test('an empty folder left by a granted rm -rf is removed, with a note', (t) => {
  const build = join(world(t), 'build')
  mkdirSync(build)
  const todo = pendingRemovals(ranUnder(build), denied, LINUX)
  assert.deepEqual(todo, [{ path: build, kind: 'dir' }])
  const notes = completeRemovals(todo)
  assert.equal(existsSync(build), false)
  assert.equal(notes.length, 1)
  assert.match(notes[0], /^dsh-allow: removed the empty folder .*build.* Landlock/)
  assert.ok(!notes[0].includes('\n'))
})

test('a one-shot grant (Allow once) counts like a stored rule', (t) => {
  const build = join(world(t), 'build')
  mkdirSync(build)
  const once = { id: 'once-c1-1', path: build, recursive: true, access: { delete: true } }
  assert.equal(pendingRemovals(ranUnder(build, { tier: 'grant', rule: once }), denied, LINUX).length, 1)
})

test('nothing is removed when it was not the user who granted the delete', (t) => {
  const build = join(world(t), 'build')
  mkdirSync(build)
  for (const tier of ['baseline', 'default', 'protected']) {
    assert.deepEqual(pendingRemovals(ranUnder(build, { tier }), denied, LINUX), [], tier)
  }
})

test('nothing is removed unless the kernel refused something in that very run', (t) => {
  const build = join(world(t), 'build')
  mkdirSync(build)
  assert.deepEqual(pendingRemovals(ranUnder(build), { ...denied, sandbox: { ...denied.sandbox, denied: false } }, LINUX), [])
  assert.deepEqual(pendingRemovals(ranUnder(build), { kind: 'background', jobId: 'j1' }, LINUX), [])
  assert.deepEqual(pendingRemovals(ranUnder(build), denied, { platform: 'macos', fenced: true }), [])
  assert.deepEqual(pendingRemovals(ranUnder(build), denied, { platform: 'linux', fenced: false }), [])
  assert.deepEqual(pendingRemovals(ranUnder(build, { mode: 'danger-full-access' }), denied, LINUX), [])
})

test('a folder with contents, a symlink or a missing path is never touched', (t) => {
  const w = world(t)
  const full = join(w, 'full')
  mkdirSync(full)
  writeFileSync(join(full, 'keep'), 'x')
  const target = join(w, 'target')
  mkdirSync(target)
  const link = join(w, 'link')
  symlinkSync(target, link)
  for (const path of [full, link, join(w, 'gone')]) assert.deepEqual(pendingRemovals(ranUnder(path), denied, LINUX), [], path)
  assert.equal(existsSync(join(full, 'keep')), true)
  assert.equal(existsSync(target), true)
})

test('a path the command makes again after removing it is left alone (rm -rf build; mkdir build)', (t) => {
  const build = join(world(t), 'build')
  mkdirSync(build)
  const extra = [{ path: build, capability: 'create', granted: true, tier: 'baseline' }]
  assert.deepEqual(pendingRemovals(ranUnder(build, { extra }), denied, LINUX), [])
  const inside = [{ path: join(build, 'x'), capability: 'write', granted: true, tier: 'baseline' }]
  assert.deepEqual(pendingRemovals(ranUnder(build, { extra: inside }), denied, LINUX), [])
})

test('made first and removed last, the folder goes (mkdir build && rm -rf build)', (t) => {
  const build = join(world(t), 'build')
  mkdirSync(build)
  const d = ranUnder(build)
  d.decision.effects.unshift({ path: build, capability: 'create', granted: true, tier: 'baseline' })
  assert.deepEqual(pendingRemovals(d, denied, LINUX), [{ path: build, kind: 'dir' }])
})

test('a file goes only under a rule for that very file, and never when the command also creates (a failed mv keeps its source)', (t) => {
  const w = world(t)
  const file = join(w, 'report.txt')
  writeFileSync(file, 'x')
  const fileRule = { id: 'f1', path: file, recursive: false, access: { delete: true } }
  const mv = [{ path: join(w, 'elsewhere.txt'), capability: 'create', granted: true, tier: 'baseline' }]
  assert.deepEqual(pendingRemovals(ranUnder(file, { rule: fileRule, extra: mv }), denied, LINUX), [])
  assert.deepEqual(pendingRemovals(ranUnder(file, { rule: { id: 'd1', path: w, recursive: true, access: { delete: true } } }), denied, LINUX), [], 'a folder rule over the file')
  const todo = pendingRemovals(ranUnder(file, { rule: fileRule }), denied, LINUX)
  assert.deepEqual(todo, [{ path: file, kind: 'file' }])
  assert.match(completeRemovals(todo)[0], /^dsh-allow: removed .*report\.txt/)
  assert.equal(existsSync(file), false)
})
