// Every change to the rules file is a ledger record (issue 31): what a
// change added and removed, who made it, and a file that can no longer be
// read. The store tells of its own writes and of changes it did not make.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { changeRecord, diffRules } from '../../plugin/changes.js'
import { RulesStore } from '../../plugin/store.js'
import * as core from '../../pkg/core/index.js'

const rule = (path, access, recursive = true) => ({ id: path, path, recursive, access, hits: 0, createdAt: 't' })

test('a change names what it added and removed, and what it stored', () => {
  const before = { rules: [rule('/w', { write: true })], commands: [] }
  const after = { rules: [rule('/h/.ssh', { read: true })], commands: [{ command: 'git', roots: ['/w'], access: { delete: true } }] }
  const { added, removed } = diffRules(before, after)
  assert.equal(added.length, 2)
  assert.equal(removed.length, 1)
  const r = changeRecord({ before, after, source: 'command', sessionId: 's1', command: '/allow add read ~/.ssh folder', time: '2026-01-01T00:00:00Z' })
  assert.equal(r.kind, 'rules')
  assert.equal(r.sessionId, 's1')
  assert.deepEqual(r.stored.map((s) => s.path), ['/h/.ssh'], 'the stored rules are named, never []')
  assert.match(r.reason, /^\/allow: \+ read \/h\/\.ssh \(folder\); \+ command grant git → \/w \(delete\); − write \/w \(folder\)$/)
  assert.equal(changeRecord({ before, after: before, source: 'file' }), undefined, 'no change, no record')
  // Only what decides counts: a hit count or a new id is no change.
  assert.equal(changeRecord({ before, after: { rules: [{ ...rule('/w', { write: true }), id: 'x', hits: 9 }], commands: [] }, source: 'file' }), undefined)
})

test('the store tells of its own writes, of a hand edit at the next read, and of a file that can no longer be read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-changes-'))
  try {
    const file = join(dir, 'dsh-allow.json')
    const store = new RulesStore(file, core)
    const told = []
    store.onChange = (c) => told.push(changeRecord(c))
    store.load()
    await store.update(({ rules, commands }) => ({ rules: [...rules, rule('/w/a', { read: true })], commands }), { source: 'card', sessionId: 's1' })
    assert.equal(told.length, 1)
    assert.equal(told[0].source, 'card')
    assert.deepEqual(told[0].stored.map((s) => s.path), ['/w/a'])
    // By hand, outside this process: seen at the next read.
    writeFileSync(file, JSON.stringify({ version: 3, rules: [rule('/h/.ssh', { read: true })] }))
    store.load()
    assert.equal(told.length, 2)
    assert.equal(told[1].source, 'file')
    assert.match(told[1].reason, /\+ read \/h\/\.ssh .*− read \/w\/a/)
    // Damaged: recorded once, however often it is read.
    writeFileSync(file, '{"version": 3, "rules": [')
    store.load()
    store.load()
    assert.equal(told.length, 3)
    assert.match(told[2].reason, /every call asks/)
    assert.deepEqual(told[2].stored, [])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
