// The rules store: atomic, locked, and never destroying a file it cannot read.
// Uses the real core from pkg/ (scripts/build.sh) for parsing and rendering.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RulesFileError, RulesStore } from '../../plugin/store.js'

const corePath = new URL('../../pkg/core/index.js', import.meta.url)
const core = existsSync(corePath) ? await import(corePath) : undefined
const skip = core === undefined ? 'pkg/ is not built (scripts/build.sh)' : false

function fresh() {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-store-'))
  return { dir, file: join(dir, 'dsh-allow.json'), done: () => rmSync(dir, { recursive: true, force: true }) }
}

const rule = (path, access) => ({ id: core.newRuleId(), path, recursive: true, access, hits: 0, createdAt: '2026-01-01T00:00:00.000Z' })

test('a missing rules file is an empty rule set, and the first write creates it', { skip }, async () => {
  const t = fresh()
  const store = new RulesStore(t.file, core)
  assert.deepEqual(store.load().rules, [])
  await store.update(({ rules, commands }) => ({ rules: [...rules, rule('/w/build', { delete: true })], commands }))
  assert.equal(JSON.parse(readFileSync(t.file, 'utf8')).rules[0].path, '/w/build')
  assert.deepEqual(readdirSync(t.dir).sort(), ['dsh-allow.json'], 'no temp or lock file is left behind')
  t.done()
})

test('a rules file that fails to parse is reported and never overwritten', { skip }, async () => {
  const t = fresh()
  writeFileSync(t.file, '{ not json')
  const store = new RulesStore(t.file, core)
  assert.match(store.load().error, /not JSON/)
  await assert.rejects(store.update(() => ({ rules: [] })), RulesFileError)
  assert.equal(readFileSync(t.file, 'utf8'), '{ not json')
  t.done()
})

test('an older-format or versionless file is a fault: no rules, an error, and no write ever touches it', { skip }, async () => {
  const t = fresh()
  for (const old of ['{"version":2,"rules":[{"prefix":"git"}]}', '{"rules":[{"path":"/w/s","access":{"read":false}}]}', '{"version":"3","rules":[]}']) {
    writeFileSync(t.file, old)
    const store = new RulesStore(t.file, core)
    const load = store.load()
    assert.deepEqual(load.rules, [])
    assert.match(load.error, /version/)
    assert.equal(load.file, t.file)
    await assert.rejects(store.update(({ rules, commands }) => ({ rules: [...rules, rule('/w/a', { read: true })], commands })), RulesFileError)
    assert.equal(readFileSync(t.file, 'utf8'), old, 'kept byte for byte')
  }
  assert.deepEqual(readdirSync(t.dir).sort(), ['dsh-allow.json'], 'no backup, temp or lock file')
  t.done()
})

test('an empty file is a fault at any time; a file that vanishes after it was seen is a fault, and is not written again', { skip }, async () => {
  const t = fresh()
  writeFileSync(t.file, '')
  assert.match(new RulesStore(t.file, core).load().error, /empty/)
  const store = new RulesStore(t.file, core)
  writeFileSync(t.file, JSON.stringify({ version: 3, rules: [rule('/w/secret', { read: false })] }))
  assert.equal(store.load().rules.length, 1)
  rmSync(t.file)
  const gone = store.load()
  assert.match(gone.error, /is gone/)
  assert.match(gone.error, /held 1 rule/)
  assert.equal(gone.lastGood.rules[0].path, '/w/secret', 'the fence keeps the rules last read whole')
  await assert.rejects(store.update(({ rules, commands }) => ({ rules: [...rules, rule('/w/a', { read: true })], commands })), RulesFileError)
  assert.equal(existsSync(t.file), false, 'nothing was written in its place')
  writeFileSync(t.file, JSON.stringify({ version: 3, rules: [] }))
  assert.equal(store.load().error, undefined, 'a file put back is read again')
  t.done()
})

test('concurrent writers from separate stores never lose an update', { skip }, async () => {
  const t = fresh()
  const stores = Array.from({ length: 4 }, () => new RulesStore(t.file, core))
  await Promise.all(stores.flatMap((s, i) => [0, 1, 2].map((j) =>
    s.update(({ rules, commands }) => ({ rules: [...rules, rule(`/w/${i}-${j}`, { read: true })], commands })))))
  assert.equal(new RulesStore(t.file, core).load().rules.length, 12)
  t.done()
})

test('a lock left by a dead writer is broken', { skip }, async () => {
  const t = fresh()
  writeFileSync(`${t.file}.lock`, '999999999 2026-01-01T00:00:00.000Z\n')
  const store = new RulesStore(t.file, core)
  await store.update(({ rules, commands }) => ({ rules: [...rules, rule('/w/x', { read: true })], commands }))
  assert.equal(store.load().rules.length, 1)
  assert.equal(existsSync(`${t.file}.lock`), false)
  t.done()
})

test('the store protects its own files: rules and lock', { skip }, () => {
  const store = new RulesStore('/h/.dsh/dsh-allow.json', core)
  assert.deepEqual(store.files(), ['/h/.dsh/dsh-allow.json', '/h/.dsh/dsh-allow.json.lock'])
})

test('a FIFO or a device at the rules file\'s path is a fault, read neither for rules nor forever', { skip }, async () => {
  const t = fresh()
  spawnSync('mkfifo', [t.file])
  const store = new RulesStore(t.file, core)
  assert.match(store.load().error, /not a regular file/)
  await assert.rejects(store.update(({ rules, commands }) => ({ rules, commands })), /not a regular file/)
  t.done()
})
