// Approved means it works (issue 33), in a real headless DSH session under
// the Landlock runner: each line of the table is decided by the
// gate, a card answered "Allow once" by the scripted human where one is
// shown, and the command runs to its end — exit 0, the chain after it
// running, the result not an error — with nothing repaired by the host
// afterwards. The lines the issue allows without a card run with none.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, results, runDsh, runnerWorks } from './harness.mjs'

const missing = missingPrerequisite()
const kernel = missing === undefined && runnerWorks()
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const python = spawnSync('/usr/bin/python3', ['-c', 'import venv, ensurepip'], { encoding: 'utf8' }).status === 0

/** The text DSH renders and the exit status it records, per call. */
const exitOf = (r) => /\[exit code: (\d+)\]/.exec(r.text)?.[1]

describe('the issue\'s table in a real DSH session', { skip: missing ?? (kernel ? false : 'the Landlock runner does not work here') }, () => {
  let world
  before(() => {
    world = makeWorld('approved')
    const w = (rel, text) => {
      mkdirSync(join(world.ws, rel, '..'), { recursive: true })
      writeFileSync(join(world.ws, rel), text)
    }
    w('build/obj/main.o', 'x')
    w('Makefile', 'all:\n\t@echo made\n')
    w('out.md', '# out\n')
    w('moved.txt', 'moving\n')
    mkdirSync(join(world.ws, 'docs'), { recursive: true })
    w('a.txt', 'old\nold\n')
    w('src/main.c', 'int main(void) {\n    return 1;\n}\n')
    w('x.diff', '--- a/src/main.c\n+++ b/src/main.c\n@@ -1,3 +1,3 @@\n int main(void) {\n-    return 1;\n+    return 0;\n }\n')
  })
  after(() => cleanup(world))

  test('every line runs to completion as one command, a card answered Allow once where one is shown', async () => {
    const lines = [
      ['rm -rf build && make', true],
      ['rm out.md && echo ok', true],
      ['mv moved.txt docs/moved.txt && echo moved', true],
      ['mkdir -p ~/notes2 && echo x > ~/notes2/todo.txt && echo done', true],
      ["perl -0pi -e 's/old\\nold/new/' a.txt && echo edited", false],
      ['patch -p1 < x.diff && echo patched', false],
      ...(python ? [['/usr/bin/python3 -m venv .venv && .venv/bin/python -m pip --version', false]] : []),
    ]
    if (!python) console.log('SKIP python -m venv in the host: /usr/bin/python3 has no venv or ensurepip here')
    const run = await runDsh(world, { script: lines.map(([l]) => bash(l)), answers: lines.filter(([, card]) => card).map(() => 'once'), timeoutMs: 120_000 })
    const r = results(run)
    assert.equal(r.length, lines.length, run.stdout + run.stderr)
    assert.equal(approvals(run).length, lines.filter(([, card]) => card).length, 'a card only where the issue expects one')
    for (const [i, [line]] of lines.entries()) {
      assert.equal(r[i].isError, false, `${line}: ${r[i].text}`)
      assert.ok(exitOf(r[i]) === undefined || exitOf(r[i]) === '0', `${line}: ${r[i].text}`)
      assert.doesNotMatch(r[i].text, /dsh-allow: removed|escalation available|refused part of this command/, line)
    }
    assert.match(r[0].text, /made/)
    assert.equal(existsSync(join(world.ws, 'build')), false)
    assert.match(r[1].text, /\bok\b/)
    assert.equal(existsSync(join(world.ws, 'out.md')), false)
    assert.equal(readFileSync(join(world.ws, 'docs', 'moved.txt'), 'utf8'), 'moving\n')
    assert.equal(readFileSync(join(world.home, 'notes2', 'todo.txt'), 'utf8'), 'x\n')
    assert.equal(readFileSync(join(world.ws, 'a.txt'), 'utf8'), 'new\n')
    assert.match(readFileSync(join(world.ws, 'src', 'main.c'), 'utf8'), /return 0;/)
    if (python) assert.match(r[6].text, /pip \d+/)
  })

  test('where the kernel carries a grant wider than approved, the card says so first and the ledger keeps it', async () => {
    mkdirSync(join(world.home, 'links'), { recursive: true })
    const line = 'ln -s ~/notes2/todo.txt ~/links/todo && echo linked'
    const run = await runDsh(world, { script: [bash(line)], answers: ['once'] })
    const [r] = results(run)
    const [card] = approvals(run)
    assert.match(card.reason, /does not exist yet and the kernel can only name what exists: this one command may also create other entries in `~\/links`/, card.reason)
    assert.equal(r.isError, false, r.text)
    assert.match(r.text, /linked/)
    const ledger = readFileSync(join(world.dshHome, 'dsh-allow-audit.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const mine = ledger.filter((l) => l.callId === r.callId)
    assert.ok(mine.some((l) => l.kind === 'decision' && l.widened?.some((w) => w.includes('~/links'))), JSON.stringify(mine))
    assert.ok(mine.some((l) => l.kind === 'answer' && l.widened?.length === 1), JSON.stringify(mine))
  })

  test('a kernel refusal is named to the model with what would grant it: an error when the command failed, a note when it went on and exited 0', async () => {
    writeFileSync(join(world.ws, 'keep.txt'), 'mine\n')
    const run = await runDsh(world, { script: [bash('rm -f keep.txt; python3 -c \'import os; os.remove("keep.txt")\'; echo after')], answers: ['reject'] })
    const [r] = results(run)
    // rm -f asks (delete); rejected, the call never runs. Hidden code alone:
    const again = await runDsh(world, { script: [bash('python3 -c \'import os; os.remove("keep.txt")\' ; echo after')] })
    const [x] = results(again)
    assert.equal(existsSync(join(world.ws, 'keep.txt')), true)
    assert.equal(r.isError, true, r.text)
    // The line's own `; echo after` makes it exit 0: the runner named the
    // refusal, so the model is told in a note and the result stands.
    assert.equal(x.isError, false, x.text)
    assert.equal(x.value?.exitCode, 0, x.text)
    assert.match(x.text, /after/)
    assert.match(x.text, /refused part of what this command tried \(delete on \S*keep\.txt \(unlink by python3\)\); the command went on and exited 0/)
    assert.match(x.text, /\/allow add delete \S*keep\.txt file/)
    assert.doesNotMatch(x.text, /escalation available|sandbox_permissions/)
    // Without the `; echo`, python's failure is the call's: an error.
    const failed = await runDsh(world, { script: [bash('python3 -c \'import os; os.remove("keep.txt")\'')] })
    const [y] = results(failed)
    assert.equal(y.isError, true, y.text)
    assert.match(y.text, /refused part of this command \(delete on \S*keep\.txt \(unlink by python3\)\), so it did not do all it was asked to/)
  })
})
