// How a call's profile reaches the runner: by a file named for its content,
// in a protected folder, written once, checked when it was changed behind
// the plugin's back, and a folder that does not grow without bound. The
// runner itself reads it (`--profile-file`) when pkg/ is built.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fenceRules, ProfileFiles } from '../../plugin/profiles.js'
import { runnerArgv } from '../../plugin/fence.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const RUNNER = join(ROOT, 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-profiles-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('one file per profile text, named for it, written once', (t) => {
  const profiles = new ProfileFiles(join(scratch(t), 'profiles'))
  const a = profiles.fileFor('{"a":1}')
  assert.equal(readFileSync(a, 'utf8'), '{"a":1}')
  assert.equal(profiles.fileFor('{"a":1}'), a)
  const b = profiles.fileFor('{"b":2}')
  assert.notEqual(a, b)
  assert.deepEqual(readdirSync(profiles.dir).sort(), [a, b].map((f) => f.slice(profiles.dir.length + 1)).sort())
})

test('a file changed or removed behind the plugin\'s back is written again before it is handed over', (t) => {
  const profiles = new ProfileFiles(join(scratch(t), 'profiles'))
  const file = profiles.fileFor('{"rules":["deny"]}')
  writeFileSync(file, '{"rules":[]}')
  assert.equal(readFileSync(profiles.fileFor('{"rules":["deny"]}'), 'utf8'), '{"rules":["deny"]}')
  rmSync(file)
  assert.equal(readFileSync(profiles.fileFor('{"rules":["deny"]}'), 'utf8'), '{"rules":["deny"]}')
})

test('old profiles beyond 64 are removed, never one used in the last minute', (t) => {
  const profiles = new ProfileFiles(join(scratch(t), 'profiles'))
  const old = []
  for (let i = 0; i < 70; i += 1) old.push(profiles.fileFor(`{"n":${i}}`))
  const then = (Date.now() - 3_600_000) / 1000
  for (const f of old.slice(0, 68)) utimesSync(f, then, then)
  profiles.fileFor('{"n":"new"}')
  const left = readdirSync(profiles.dir)
  assert.equal(left.length, 64)
  assert.ok(existsSync(old[69]) && existsSync(old[68]), 'recently used profiles stay')
})

test('the runner argv carries the file, not the profile, whatever its size', () => {
  const argv = runnerArgv('/r', { rules: new Array(10_000).fill({}) }, ['bash', '-c', 'true'], { profileFile: '/p/x.json', fenceCache: '/c' })
  assert.deepEqual(argv, ['/r', 'run', '--profile-file', '/p/x.json', '--fence-cache', '/c', '--', 'bash', '-c', 'true'])
})

test('the runner runs a 10,000-rule profile from its file (one argument would be 1.5 MB: E2BIG)', { skip: !existsSync(RUNNER) && 'pkg/ is not built' }, (t) => {
  const dir = scratch(t)
  const rules = Array.from({ length: 10_000 }, (_, i) => ({ id: `r${i}`, path: join(dir, 'many', `r${i}`), recursive: true, access: { read: true }, hits: 0, createdAt: '' }))
  const profile = { workspace: dir, home: dir, harnessHome: dir, platform: 'linux', mode: 'workspace-write', rules, enforce: 'off' }
  const text = JSON.stringify(profile)
  assert.ok(text.length > 128 * 1024)
  const file = new ProfileFiles(join(dir, 'profiles')).fileFor(text)
  const run = spawnSync(RUNNER, ['run', '--profile-file', file, '--', '/bin/echo', 'ran'], { encoding: 'utf8' })
  assert.equal(run.stdout, 'ran\n', run.stderr)
})

test('the profile carries each rule as the fence reads it, and the same stored rules stay the same array (and the same file)', (t) => {
  const stored = Object.freeze([
    Object.freeze({ id: 'r1', path: '/w/a', recursive: true, access: Object.freeze({ read: true, write: true }), hits: 3, createdAt: '2026-01-01T00:00:00.000Z' }),
    Object.freeze({ id: 'r2', path: '/w/b/file', recursive: false, access: Object.freeze({ delete: false }), hits: 0, createdAt: '2026-02-01T00:00:00.000Z' }),
  ])
  const rules = fenceRules(stored)
  assert.deepEqual(rules, [
    { path: '/w/a', recursive: true, access: { read: true, write: true } },
    { path: '/w/b/file', recursive: false, access: { delete: false } },
  ])
  assert.equal(fenceRules(stored), rules, 'one array per stored array')
  assert.ok(Object.isFrozen(rules))
  const profiles = new ProfileFiles(join(scratch(t), 'profiles'))
  const profile = (r) => ({ workspace: '/w', rules: r, grants: [] })
  const file = profiles.forProfile(profile(rules))
  assert.equal(profiles.forProfile(profile(fenceRules(stored))), file)
  assert.ok(!readFileSync(file, 'utf8').includes('createdAt'))
})
