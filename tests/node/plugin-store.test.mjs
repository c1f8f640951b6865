// The rules store: atomic, locked, and never destroying a file it cannot read.
// Uses the real core from pkg/ (scripts/build.sh) for parsing and rendering.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
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

test('an older-format file is kept as .v2.bak on the first write, and only then', { skip }, async () => {
  const t = fresh()
  const old = '{"version":2,"rules":[{"prefix":"git"}]}'
  writeFileSync(t.file, old)
  const store = new RulesStore(t.file, core)
  assert.deepEqual(store.load().rules, [])
  await store.update(({ rules, commands }) => ({ rules: [...rules, rule('/w/a', { read: true })], commands }))
  assert.equal(readFileSync(`${t.file}.v2.bak`, 'utf8'), old)
  await store.update(({ rules, commands }) => ({ rules: [...rules, rule('/w/b', { read: true })], commands }))
  assert.equal(readFileSync(`${t.file}.v2.bak`, 'utf8'), old)
  assert.equal(store.load().rules.length, 2)
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

test('the store protects its own files: rules, lock and backup', { skip }, () => {
  const store = new RulesStore('/h/.dsh/dsh-allow.json', core)
  assert.deepEqual(store.files(), ['/h/.dsh/dsh-allow.json', '/h/.dsh/dsh-allow.json.lock', '/h/.dsh/dsh-allow.json.v2.bak'])
})
