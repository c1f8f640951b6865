// Kept fences in a real (headless) DSH session: the runner compiles a call's
// fence once and reuses it while everything its compile found would be found
// the same — through git calls that rewrite files in `.git`, files made in
// the workspace, and the host's own files changing under $DSH_HOME on every
// call. The runner is the one in pkg/, started by the plugin as always; the
// plugin's `runner` setting points at a two-line script that only adds
// `--report-fence` and keeps the runner's report lines for the test.

import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, makeWorld, missingPrerequisite, PKG, results, runDsh, runnerWorks } from './harness.mjs'

const missing = missingPrerequisite()
const kernel = missing === undefined && runnerWorks()
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const worlds = []
after(() => worlds.forEach(cleanup))

/** A world whose dsh-allow starts the real runner through a script that reports each fence. */
function reportingWorld(label) {
  const world = makeWorld(label)
  worlds.push(world)
  const runner = join(PKG, 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
  world.fenceLog = join(world.root, 'fences.log')
  const script = join(world.root, 'runner-reporting.sh')
  writeFileSync(script, [
    '#!/bin/bash',
    `exec ${JSON.stringify(runner)} "$1" --report-fence "\${@:2}" 2> >(tee -a ${JSON.stringify(world.fenceLog)} >&2)`,
    '',
  ].join('\n'))
  chmodSync(script, 0o755)
  const patch = join(world.profile, 'cordis.patch.yml')
  writeFileSync(patch, readFileSync(patch, 'utf8').replace('      name: dsh-allow\n', `      name: dsh-allow\n      config: ${JSON.stringify({ runner: script })}\n`))
  // A repository with a commit: git status refreshes its index.
  const git = (...args) => spawnSync('git', ['-C', world.ws, ...args], { env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' } })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'first')
  writeFileSync(join(world.home, '.gitconfig'), '[user]\n\tname = t\n\temail = t@example.invalid\n')
  return world
}

/** What the runner said of each call (`fence` or `held`), in order (the probe's own run included). */
function reports(world, what = 'fence') {
  if (!existsSync(world.fenceLog)) return []
  const prefix = `dsh-allow ${what}: `
  return readFileSync(world.fenceLog, 'utf8').split('\n').filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length))
}

describe('kept fences in a DSH session', { skip: missing ?? (kernel ? false : 'the runner cannot fence here') }, () => {
  test('a session reuses its fences through git calls, files written in the workspace and the host writing under DSH_HOME', async () => {
    const world = reportingWorld('kept-fence')
    const round = [
      'cat README.md', 'git status', 'ls -la', 'echo one > out.txt', 'git status --short', 'mkdir -p sub && echo two > sub/x.txt',
      'git log --oneline', 'wc -l README.md out.txt', 'git diff --stat', 'ls sub',
    ]
    const script = [...round, ...round, ...round].map(bash)
    const run = await runDsh(world, { script, timeoutMs: 180_000 })
    const calls = results(run)
    assert.equal(calls.length, script.length, run.stderr.slice(-2000))
    assert.deepEqual(calls.filter((r) => r.isError).map((r) => r.callId), [], 'every call ran')
    assert.equal(readFileSync(join(world.ws, 'sub', 'x.txt'), 'utf8'), 'two\n')
    const fences = reports(world)
    // The probe's run (no kept fences) and one report per call.
    assert.equal(fences.length, script.length + 1, fences.join('\n'))
    const perCall = fences.slice(1)
    const compiled = perCall.filter((r) => r.startsWith('compiled'))
    assert.ok(compiled.every((r) => r === 'compiled, kept'), `a compiled fence was not kept: ${compiled.join('; ')}`)
    // A fence per profile (git's own calls carry delete in `.git`), compiled
    // while the session sets up its files under DSH_HOME; then only reuse.
    assert.ok(compiled.length <= 4, `compiled ${compiled.length} times:\n${perCall.join('\n')}`)
    assert.deepEqual(perCall.slice(round.length), Array(script.length - round.length).fill('reused'), perCall.join('\n'))
    // Few fences kept at all: one file per profile.
    const kept = readdirSync(join(world.dshHome, 'dsh-allow-fence')).filter((f) => f.startsWith('fence-'))
    assert.ok(kept.length >= 2 && kept.length <= compiled.length, kept.join(', '))
    // And the keeper holds what the first call of each fence built: the
    // later calls join it (a call the busy keeper could not answer in time
    // builds).
    const held = reports(world, 'held').slice(1 + round.length)
    const joined = held.filter((h) => h === 'joined').length
    assert.ok(joined >= held.length * 0.8, `joined ${joined} of ${held.length}:\n${held.join('\n')}`)
  })

  test('with a long-lived store of rules, later calls join what the keeper holds', async () => {
    const world = reportingWorld('kept-fence-held')
    // Always allow, clicked for a year: 600 rules on folders that exist.
    const rules = Array.from({ length: 600 }, (_, i) => {
      const path = join(world.root, 'many', `m${i}`)
      mkdirSync(path, { recursive: true })
      return { id: `r${i}`, path, recursive: true, access: { read: true }, hits: 0, createdAt: '2026-01-01T00:00:00.000Z' }
    })
    writeFileSync(world.rulesFile, `${JSON.stringify({ version: 3, rules }, null, 2)}\n`)
    const round = ['cat README.md', 'git status', `ls ${join(world.root, 'many', 'm7')}`, 'echo one > out.txt', 'git log --oneline', 'wc -l README.md out.txt']
    const script = [...round, ...round, ...round, ...round].map(bash)
    const run = await runDsh(world, { script, timeoutMs: 180_000 })
    const calls = results(run)
    assert.equal(calls.length, script.length, run.stderr.slice(-2000))
    assert.deepEqual(calls.filter((r) => r.isError).map((r) => r.callId), [], 'every call ran')
    // The first call of each fence builds it and hands it over; the later
    // ones join (one the busy keeper could not answer in time builds).
    const held = reports(world, 'held').slice(1)
    assert.equal(held.length, script.length, held.join('\n'))
    const later = held.slice(round.length)
    const joined = later.filter((h) => h === 'joined').length
    assert.ok(joined >= later.length * 0.8, `joined ${joined} of ${later.length}:\n${held.join('\n')}`)
  })
})
