// Issue 9 in the real DSH 0.1.0-rc.8 host: everyday tools keep working under
// the kernel fence with at most one answered prompt per workflow, and deleting
// user files stays refused afterwards.
//
// One headless DSH run carries every workflow (a boot is the slow part), the
// scripted human answering "Always allow" to whatever is asked; a second run,
// with nobody answering, tries the deletes. We read each tool result (its text
// and exit code), the approval cards, the stored rules file and the files on
// disk. cargo and npm are covered by the Rust suite (tests/workflows.rs): this
// world's $HOME is a fixture without toolchains.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { approvals, cleanup, envOf, makeWorld, missingPrerequisite, results, runDsh, runnerWorks } from './harness.mjs'

const missing = missingPrerequisite()
const kernel = missing === undefined && runnerWorks()
const NO_KERNEL = 'NOT TESTED — the Landlock runner (pkg/bin/linux-x64/dsh-allow) cannot run a command under a profile here, '
  + 'so nothing would show these tools working under the kernel fence, or the kernel refusing a delete'
const NO_CHANNEL = 'tool "bash" requires approval, but no approval channel is available'
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })

// A tool is looked up on the PATH the DSH run gets (envOf: system folders
// only), not on the developer's: a shim under the real home would not run.
const RUN_PATH = envOf({}).PATH
const has = (tool) => spawnSync(tool, ['--version'], { env: { PATH: RUN_PATH }, stdio: 'ignore' }).status === 0
const lacking = (tools) => {
  const gone = tools.filter((t) => !has(t))
  return gone.length === 0 ? false : `NOT TESTED — ${gone.join(', ')} not found on the run's PATH (${RUN_PATH})`
}

const read = (...p) => readFileSync(join(...p), 'utf8')

/**
 * The workflows, in the order they run. `dir` is where the commands run
 * (each step spells its own `cd dir &&`: a bash call starts in the workspace,
 * and one leading `cd` is what a command grant accepts). `asks` is the one
 * program that may ask, once, for delete in its folder (its proposal must be
 * bound to that program); null means the spec says no prompt at all. A step
 * is a command line, or { run, see, unseen } with patterns its output must
 * (not) show: the state on disk as the fenced tool saw it at that moment.
 *
 * The git workflows share one repository at the workspace root, as a project
 * does: `.git` is workspace tool state there, and each self-guarded rewrite
 * (checkout, merge, stash, rebase) gets the worktree for its own call, so
 * none asks. A repository in a subfolder has
 * its own block below.
 */
const WORKFLOWS = [
  {
    name: 'git init, add, commit and branch in the workspace pass with no prompt',
    tools: ['git'],
    dir: '',
    asks: null,
    files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'src/main.rs': 'fn main() {}\n' },
    steps: [
      'git init -q',
      'git add .',
      'git commit -q -m one',
      'git branch feature',
      { run: 'git branch --list', see: [/^\* main$/m, /^ {2}feature$/m] },
      { run: 'git log --format=%s', see: [/^one$/m] },
    ],
  },
  {
    name: 'git checkout switches branches back and forth with no prompt (self-guarded: the worktree is granted for the call)',
    tools: ['git'],
    dir: '',
    asks: null,
    steps: [
      'git checkout -q feature',
      "echo 'alpha 2' > a.txt",
      'git commit -q -am feature',
      'git checkout -q main',
      // Back on main the file is main's again: the checkout rewrote it.
      { run: 'cat a.txt', see: [/^alpha$/m], unseen: [/alpha 2/] },
      "echo 'beta 2' > b.txt",
      'git commit -q -am main',
      { run: 'git log --format=%s main', see: [/^main\none\n$/] },
    ],
    check: (ws) => {
      assert.equal(git(ws, 'show', 'feature:a.txt'), 'alpha 2\n', 'the commit made on feature is there')
    },
  },
  {
    name: 'git merge brings the feature branch in with no prompt',
    tools: ['git'],
    dir: '',
    asks: null,
    steps: [
      'git merge -q --no-edit feature',
      // A merge commit: two parents.
      { run: 'git rev-list --parents -n 1 HEAD', see: [/^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+$/m] },
      { run: 'cat a.txt b.txt', see: [/^alpha 2\nbeta 2$/m] },
    ],
    check: (ws) => {
      assert.equal(git(ws, 'merge-base', '--is-ancestor', 'feature', 'main', { status: true }), 0, 'feature is merged into main')
    },
  },
  {
    name: 'git stash puts work aside and pops it back with no prompt',
    tools: ['git'],
    dir: '',
    asks: null,
    steps: [
      'echo wip >> README.md',
      'git stash -q',
      { run: 'cat README.md', unseen: [/wip/] },
      { run: 'git stash list', see: [/^stash@\{0\}/m] },
      'git stash pop -q',
      { run: 'cat README.md', see: [/^wip$/m] },
      'git commit -q -am wip',
    ],
    check: (ws) => {
      assert.equal(git(ws, 'stash', 'list'), '', 'the stash was popped')
      assert.match(git(ws, 'show', 'main:README.md'), /^wip$/m)
    },
  },
  {
    name: 'git rebase moves a topic branch onto main with no prompt',
    tools: ['git'],
    dir: '',
    asks: null,
    steps: [
      'git checkout -q -b topic feature',
      'echo gamma > c.txt',
      'git add c.txt',
      'git commit -q -m topic',
      'git rebase -q main',
      // feature's commit is already in main: only `topic` is replayed, on top of main.
      { run: 'git log --format=%s -2', see: [/^topic\nwip$/m] },
      { run: 'cat a.txt b.txt c.txt', see: [/^alpha 2\nbeta 2\ngamma$/m] },
    ],
    check: (ws) => {
      assert.equal(git(ws, 'rev-parse', 'topic~1'), git(ws, 'rev-parse', 'main'), 'topic sits directly on main')
      assert.equal(git(ws, 'symbolic-ref', '--short', 'HEAD'), 'topic\n', 'the rebase finished')
      assert.equal(read(ws, 'c.txt'), 'gamma\n')
    },
  },
  {
    name: 'sed -i with a plain script edits files in place with no prompt (its folder is granted for the call)',
    tools: ['sed'],
    dir: 'sed',
    asks: null,
    files: { 'sed/a.txt': 'old\n', 'sed/b.txt': 'old\n' },
    steps: ['cd sed && sed -i s/old/new/ a.txt', 'cd sed && sed -i s/old/new/ b.txt'],
    check: inPlace('sed'),
  },
  {
    name: 'perl -pi with a plain substitution edits files in place with no prompt (its folder is granted for the call)',
    tools: ['perl'],
    dir: 'perl',
    asks: null,
    files: { 'perl/a.txt': 'old\n', 'perl/b.txt': 'old\n' },
    steps: ["cd perl && perl -pi -e 's/old/new/' a.txt", "cd perl && perl -pi -e 's/old/new/' b.txt"],
    check: inPlace('perl'),
  },
  {
    name: 'vim saves by renaming beside the file after one prompt, and the next vim in that folder does not ask',
    tools: ['vim'],
    dir: 'vim',
    asks: 'vim',
    files: { 'vim/a.txt': 'old\n', 'vim/b.txt': 'old\n' },
    // vim exits non-zero when the substitution finds nothing or the write fails.
    steps: ["cd vim && vim -u NONE -i NONE -Es -c '%s/old/new/' -c wq a.txt", "cd vim && vim -u NONE -i NONE -Es -c '%s/old/new/' -c wq b.txt"],
    check: inPlace('vim'),
  },
  {
    name: 'ex saves by renaming beside the file after one prompt, and the next ex in that folder does not ask',
    tools: ['ex'],
    dir: 'ex',
    asks: 'ex',
    files: { 'ex/a.txt': 'old\n', 'ex/b.txt': 'old\n' },
    steps: ["cd ex && ex -u NONE -sc '%s/old/new/|x' a.txt", "cd ex && ex -u NONE -sc '%s/old/new/|x' b.txt"],
    check: inPlace('ex'),
  },
  {
    name: 'python3 -m compileall compiles a package with no prompt',
    tools: ['python3'],
    dir: 'py',
    asks: null,
    files: { 'py/mod.py': 'X = 1\n', 'py/pkg/__init__.py': '', 'py/pkg/util.py': 'Y = 2\n', 'py/app.py': 'import mod\nprint(mod.X)\n' },
    steps: [
      // compileall exits 1 when a file cannot be compiled or its .pyc written.
      'cd py && python3 -m compileall -q .',
      // Where this Python, inside the fence, puts a module's bytecode: read back below.
      { run: `cd py && python3 -c 'import importlib.util as u; print(u.cache_from_source("mod.py")); print(u.cache_from_source("pkg/util.py"))'`, see: [/\.pyc$/m] },
      { run: 'cd py && python3 app.py', see: [/^1$/m] },
    ],
    check: (ws, texts) => {
      const caches = texts[1].split('\n').map((l) => l.trim()).filter((l) => l.endsWith('.pyc'))
      assert.equal(caches.length, 2, texts[1])
      for (const c of caches) assert.ok(existsSync(resolve(ws, 'py', c)), `compileall wrote ${c}`)
    },
  },
  {
    name: 'make builds a C program and a generated file with no prompt',
    tools: ['make', 'cc'],
    dir: 'mk',
    asks: null,
    files: {
      'mk/Makefile': 'all: hello out/data.txt\n\nhello: hello.c\n\tcc -o hello hello.c\n\nout/data.txt: input.txt\n\tmkdir -p out\n\tsed s/a/b/ input.txt > out/data.txt\n',
      'mk/hello.c': 'int main(void) { return 0; }\n',
      'mk/input.txt': 'banana\n',
    },
    steps: ['cd mk && make', { run: 'cd mk && ./hello && cat out/data.txt', see: [/^bbnana$/m] }],
    check: (ws) => {
      assert.equal(read(ws, 'mk', 'out', 'data.txt'), 'bbnana\n')
      assert.equal(spawnSync(join(ws, 'mk', 'hello')).status, 0, 'the built program runs')
    },
  },
]

/** An in-place edit of a.txt and b.txt: both changed, no temp or swap file left beside them. */
function inPlace(dir) {
  return (ws) => {
    assert.equal(read(ws, dir, 'a.txt'), 'new\n')
    assert.equal(read(ws, dir, 'b.txt'), 'new\n')
    assert.deepEqual(readdirSync(join(ws, dir)).sort(), ['a.txt', 'b.txt'], 'nothing left behind by a failed rename')
  }
}

/** git, unfenced, reading the repository the workflows left (identity from the fixture home). */
function git(ws, ...args) {
  const opts = typeof args.at(-1) === 'object' ? args.pop() : {}
  const r = spawnSync('git', args, { cwd: ws, env: { PATH: RUN_PATH, HOME: join(ws, '..', 'home'), GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' })
  if (opts.status) return r.status
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

const show = (step, r) => JSON.stringify({ command: step, exitCode: r?.value?.exitCode, isError: r?.isError, text: r?.text }, null, 1)
const within = (path, root) => path === root || path.startsWith(`${root}/`)

describe('everyday tools in a real DSH process under the default fence', { skip: missing }, () => {
  let world
  before(() => {
    world = makeWorld('workflows')
    // git needs an identity; the developer's is in ~/.gitconfig, so is the
    // fixture's. (An env assignment before `git` would keep the command
    // grant from matching: the strict shape refuses it.)
    writeFileSync(join(world.home, '.gitconfig'), '[user]\n\tname = Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n')
  })
  after(() => cleanup(world))

  describe('the workflows, each with at most one prompt answered Always allow', { skip: !kernel && NO_KERNEL }, () => {
    const ran = WORKFLOWS.map((w) => ({ ...w, skip: lacking(w.tools), first: 0 }))
    let run
    let seconds
    before(async () => {
      const script = []
      for (const w of ran.filter((x) => !x.skip)) {
        for (const [p, text] of Object.entries(w.files ?? {})) {
          mkdirSync(dirname(join(world.ws, p)), { recursive: true })
          writeFileSync(join(world.ws, p), text)
        }
        w.first = script.length
        script.push(...w.steps.map((s) => bash(typeof s === 'string' ? s : s.run)))
      }
      // One "Always allow" per workflow that may ask: a workflow that asks
      // twice eats a later one's answer, and the counts below say so.
      const answers = ran.filter((x) => !x.skip && x.asks).map(() => 'always')
      const t0 = Date.now()
      run = await runDsh(world, { script, answers, timeoutMs: 240_000 })
      seconds = (Date.now() - t0) / 1000
      assert.equal(results(run).length, script.length, `every step reported a result\n${run.stdout}${run.stderr}`)
    })

    // The scripted model numbers calls e2e-<step>-0, one call per step.
    const callIdOf = (i) => `e2e-${i}-0`

    for (const w of ran) {
      test(w.name, { skip: w.skip }, (t) => {
        const texts = []
        const ids = new Set()
        w.steps.forEach((s, k) => {
          const step = typeof s === 'string' ? { run: s } : s
          const id = callIdOf(w.first + k)
          ids.add(id)
          const r = results(run).find((x) => x.callId === id)
          assert.ok(r, `no result for ${step.run}`)
          assert.equal(r.command, step.run, 'the results line up with the script')
          assert.equal(r.isError, false, show(step.run, r))
          // DSH returns a failed command as an ordinary result (isError
          // false, "[exit code: N]" in the text): the exit code says it worked.
          assert.equal(r.value?.exitCode, 0, show(step.run, r))
          assert.doesNotMatch(r.text, /kernel fence refused/, show(step.run, r))
          for (const re of step.see ?? []) assert.match(r.text, re, show(step.run, r))
          for (const re of step.unseen ?? []) assert.doesNotMatch(r.text, re, show(step.run, r))
          texts.push(r.text)
        })

        const asked = approvals(run).filter((a) => ids.has(a.callId))
        const cards = JSON.stringify(asked.map((a) => ({ command: a.pending?.command, reason: a.reason, proposals: a.pending?.proposals })), null, 1)
        t.diagnostic(`prompts: ${asked.length}${asked.length ? ` (${asked.map((a) => a.pending?.command).join('; ')})` : ''}`)
        if (w.asks === null) {
          assert.equal(asked.length, 0, `no prompt expected:\n${cards}`)
        } else {
          assert.ok(asked.length <= 1, `at most one prompt per workflow:\n${cards}`)
          for (const a of asked) {
            // The ask is bound to the program: delete in its folder, for it alone.
            assert.ok(a.pending?.proposals?.length > 0, cards)
            for (const p of a.pending.proposals) {
              assert.equal(p.command, w.asks, cards)
              assert.equal(p.path, join(world.ws, w.dir), cards)
              assert.deepEqual(p.access, { delete: true }, cards)
            }
            assert.equal(a.answer, 'always')
          }
        }
        w.check?.(world.ws, texts)
      })
    }

    test('the answers were stored as command grants: no path rule grants delete on the workspace or on src', (t) => {
      t.diagnostic(`the workflows run took ${seconds.toFixed(1)} s`)
      assert.ok(run.rulesText, 'a rules file was written')
      const { rules = [], commands = [] } = JSON.parse(run.rulesText)
      const src = join(world.ws, 'src')
      for (const target of [world.ws, src]) {
        const covering = rules.filter((r) => r.access?.delete && (r.path === target || (r.recursive && within(target, r.path))))
        assert.deepEqual(covering, [], `a path rule grants delete on ${target}:\n${run.rulesText}`)
      }
      // Every program that asked holds one grant: delete in the folder it asked for.
      const askers = [...new Set(approvals(run).flatMap((a) => a.pending?.proposals ?? []).map((p) => p.command).filter(Boolean))]
      for (const program of askers) {
        const grants = commands.filter((g) => g.command === program)
        const w = ran.find((x) => x.asks === program)
        assert.equal(grants.length, 1, `one grant for ${program}:\n${run.rulesText}`)
        assert.deepEqual(grants[0].roots, [join(world.ws, w.dir)], run.rulesText)
        assert.deepEqual(grants[0].access, { delete: true }, run.rulesText)
        assert.equal(grants[0].shape, 'strict', run.rulesText)
      }
      assert.deepEqual(commands.map((g) => g.command).sort(), [...askers].sort(), `no grant beyond the programs that asked:\n${run.rulesText}`)
      for (const g of commands) t.diagnostic(`command grant: ${g.command} may delete under ${g.roots.join(', ')}`)
    })
  })

  describe('a repository in a subfolder: git asks once, for its .git, then works there', { skip: (!kernel && NO_KERNEL) || lacking(['git']) }, () => {
    let nested
    let run
    const steps = ['git init -q -b main sub', 'cd sub && git add .', 'cd sub && git commit -q -m one', 'cd sub && git status --short', 'cd sub && git log --format=%s']
    before(async () => {
      // A world of its own: the grants stored above would answer for it.
      nested = makeWorld('workflows-nested')
      writeFileSync(join(nested.home, '.gitconfig'), '[user]\n\tname = Test\n\temail = test@example.invalid\n')
      mkdirSync(join(nested.ws, 'sub'), { recursive: true })
      writeFileSync(join(nested.ws, 'sub', 'a.txt'), 'alpha\n')
      run = await runDsh(nested, { script: steps.map(bash), answers: ['always'] })
      assert.equal(results(run).length, steps.length, run.stdout + run.stderr)
    })
    after(() => cleanup(nested))

    test('every step exits 0 after one prompt, answered as a command grant for git in sub/.git', () => {
      results(run).forEach((r, i) => {
        assert.equal(r.command, steps[i])
        assert.equal(r.value?.exitCode, 0, show(steps[i], r))
      })
      assert.match(results(run)[4].text, /^one$/m)
      const asked = approvals(run)
      assert.equal(asked.length, 1, JSON.stringify(asked.map((a) => a.pending?.command)))
      assert.equal(asked[0].pending.command, 'git init -q -b main sub')
      assert.deepEqual(asked[0].pending.proposals.map((p) => [p.command, p.path, p.access]), [['git', join(nested.ws, 'sub', '.git'), { delete: true }]])
      const { rules = [], commands = [] } = JSON.parse(run.rulesText)
      assert.deepEqual(rules.filter((r) => r.access?.delete), [], run.rulesText)
      assert.deepEqual(commands.map((g) => [g.command, g.roots]), [['git', [join(nested.ws, 'sub', '.git')]]], run.rulesText)
    })
  })

  describe('after those answers, deleting user files is still refused', () => {
    let run
    let rulesBefore
    let seconds
    before(async () => {
      mkdirSync(join(world.ws, 'src'), { recursive: true })
      if (!existsSync(join(world.ws, 'src', 'main.rs'))) writeFileSync(join(world.ws, 'src', 'main.rs'), 'fn main() {}\n')
      rulesBefore = existsSync(world.rulesFile) ? read(world.rulesFile) : undefined
      // Nobody answers: a prompt ends as DSH's "no approval channel".
      const t0 = Date.now()
      run = await runDsh(world, {
        script: [bash('rm -rf src'), bash('rm src/main.rs'), bash(`python3 -c 'import os; os.remove("src/main.rs")'`)],
        answers: [],
      })
      seconds = (Date.now() - t0) / 1000
      assert.equal(results(run).length, 3, run.stdout + run.stderr)
    })

    test('rm -rf src and rm src/main.rs still ask, and unanswered they delete nothing', (t) => {
      t.diagnostic(`the refusals run took ${seconds.toFixed(1)} s`)
      for (const [i, command] of [[0, 'rm -rf src'], [1, 'rm src/main.rs']]) {
        const r = results(run)[i]
        assert.equal(r.command, command)
        assert.equal(r.isError, true, show(command, r))
        assert.ok(r.text.includes(NO_CHANNEL), show(command, r))
        const [a] = approvals(run).filter((x) => x.callId === r.callId)
        assert.ok(a, `${command} raised a card`)
        assert.match(a.reason, /^dsh-allow: .*delete .*\/ws\/src/, a.reason)
        // A path ask, not one a command grant could answer.
        assert.ok(a.pending.proposals.every((p) => !p.command), JSON.stringify(a.pending.proposals))
      }
      assert.equal(read(world.ws, 'src', 'main.rs'), 'fn main() {}\n')
      assert.equal(existsSync(world.rulesFile) ? read(world.rulesFile) : undefined, rulesBefore, 'nothing was stored')
    })

    test('inline Python that deletes src/main.rs runs without a prompt and the kernel refuses the delete', { skip: !kernel && NO_KERNEL }, () => {
      const r = results(run)[2]
      assert.match(r.command, /^python3 -c/)
      assert.deepEqual(approvals(run).filter((x) => x.callId === r.callId), [], 'opaque code runs: the kernel fence covers all five capabilities')
      assert.match(r.text, /PermissionError|Permission denied|Operation not permitted/, show(r.command, r))
      // The denial comes back as guidance naming the path. (From a bare EACCES
      // the core cannot always tell which capability was refused.)
      assert.match(r.text, /dsh-allow: the kernel fence refused .* on .*\/ws\/src\/main\.rs/, show(r.command, r))
      assert.notEqual(r.value?.exitCode, 0, show(r.command, r))
      assert.equal(read(world.ws, 'src', 'main.rs'), 'fn main() {}\n', 'the file is still there')
    })
  })
})

// Issue 38: the everyday lines that used to fail under the fence with no
// card, in a real DSH session. Each line is one bash call; a card is
// answered Allow once. Lines that run with no card must exit 0; the ones
// whose removals the line does not name (make clean, collectstatic), git
// beside npm, and git worktree add ../x ask once, then work. Hidden code
// deleting a file that was there is still refused, and the refusal the
// runner names comes back to the model and into the ledger as the runner
// named it. The tools (the venv with django, vite) come from scripts/setup.sh.
const TOOLS = process.env.DSH_ALLOW_TOOLS ?? '/usr/local/lib/dsh-allow-tools'
const TOOL_DIRS = [join(TOOLS, 'venv', 'bin'), join(TOOLS, 'node', 'node_modules', '.bin')]
const everydayTools = () => {
  const path = [...TOOL_DIRS, RUN_PATH].join(':')
  const gone = ['sqlite3', 'tar', 'unzip', 'zip', 'make', 'cc', 'git', 'npm', 'vite', 'django-admin']
    .filter((t) => spawnSync('/bin/sh', ['-c', `command -v ${t}`], { env: { PATH: path }, stdio: 'ignore' }).status !== 0)
  return gone.length === 0 ? false : `NOT TESTED — ${gone.join(', ')} not found on ${path} (scripts/setup.sh installs them)`
}

describe('everyday lines under the fence: no card, or one card up front, then they work (issue 38)', { skip: missing || (!kernel && NO_KERNEL) || everydayTools() }, () => {
  let world
  let run
  const lines = [
    ['sqlite3 app.db "create table t(x); insert into t values (1)"', false],
    ['sqlite3 app.db "insert into t values (2)"', false],
    [`python3 -c "import sqlite3, os; c = sqlite3.connect('app.db'); c.execute('pragma journal_mode=wal'); c.execute('insert into t values (3)'); c.commit(); os._exit(0)"`, false],
    ['sqlite3 app.db "insert into t values (4)"', false],
    ['tar -xzf site.tgz', false],
    ['echo v1 > site/index.html && unzip -oq site.zip', false],
    ['vite build --logLevel error && echo "document.body.append(1)" >> main.js && vite build --logLevel error', false],
    ['make -s && make -s clean', true],
    ['cd dj && python3 manage.py collectstatic --noinput -v 0', true],
    ['git init -q && git add -A && git commit -qm one', false],
    ['echo x > b.txt && git add -A && git commit -qm two && npm version patch -m "v%s"', true],
    ['git worktree add -q ../x', true],
  ]
  before(async () => {
    world = makeWorld('everyday')
    world.binDirs = TOOL_DIRS
    writeFileSync(join(world.home, '.gitconfig'), '[user]\n\tname = Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n')
    const w = (rel, text) => {
      mkdirSync(dirname(join(world.ws, rel)), { recursive: true })
      writeFileSync(join(world.ws, rel), text)
    }
    w('site/index.html', '<p>v2</p>\n')
    w('index.html', '<!doctype html>\n<html><body><script type="module" src="/main.js"></script></body></html>\n')
    w('main.js', 'document.body.append("hi")\n')
    w('Makefile', 'all: hello\n\nhello: hello.c\n\tcc -o hello hello.c\n\nclean:\n\trm -f hello\n')
    w('hello.c', 'int main(void) { return 0; }\n')
    w('package.json', '{"name": "app", "version": "1.0.0"}\n')
    w('keep.txt', 'mine\n')
    const env = { ...envOf(world), PATH: [...TOOL_DIRS, RUN_PATH].join(':') }
    const sh = (line, cwd = world.ws) => assert.equal(spawnSync('/bin/sh', ['-c', line], { cwd, env }).status, 0, line)
    // The archives hold v2 of site/; the workspace will hold v1 again before unzip.
    sh('tar -czf site.tgz site && zip -qr site.zip site && echo v1 > site/index.html')
    mkdirSync(join(world.ws, 'dj'))
    sh(`django-admin startproject mysite . && printf '\\nSTATIC_ROOT = BASE_DIR / "staticfiles"\\n' >> mysite/settings.py && mkdir -p mysite/static && echo 'p {}' > mysite/static/a.css && printf 'STATICFILES_DIRS = [BASE_DIR / "mysite" / "static"]\\n' >> mysite/settings.py && python3 manage.py collectstatic --noinput -v 0 && echo 'p { color: red }' > mysite/static/a.css && touch -d '+1 hour' mysite/static/a.css`, join(world.ws, 'dj'))
    const script = [...lines.map(([l]) => bash(l)), bash(`python3 -c 'import os; os.remove("keep.txt")'`)]
    run = await runDsh(world, { script, answers: lines.filter(([, card]) => card).map(() => 'once'), timeoutMs: 240_000 })
    assert.equal(results(run).length, script.length, run.stdout + run.stderr)
  })
  after(() => cleanup(world))

  test('every line exits 0; a card only where the line asks up front, and each says why', () => {
    const r = results(run)
    for (const [i, [line]] of lines.entries()) {
      assert.equal(r[i].command, line)
      assert.equal(r[i].isError, false, show(line, r[i]))
      assert.equal(r[i].value?.exitCode, 0, show(line, r[i]))
    }
    const asked = approvals(run)
    const carded = lines.filter(([, card]) => card).map(([l]) => l)
    assert.deepEqual(asked.map((a) => a.pending?.command), carded, JSON.stringify(asked.map((a) => a.reason), null, 1))
    assert.match(asked[0].reason, /make clean` runs the Makefile's clean recipe/, asked[0].reason)
    assert.match(asked[1].reason, /collectstatic` removes the files it collected before/, asked[1].reason)
    assert.match(asked[2].reason, /git changes the repository .*\.git and the line also runs code/, asked[2].reason)
    assert.match(asked[3].reason, /create,read,write .*\/x|read,create,write .*\/x|x/, asked[3].reason)
  })

  test('what the lines did is on disk, and nothing was left behind', () => {
    const ws = world.ws
    for (const f of ['app.db-journal', 'app.db-wal', 'app.db-shm']) assert.equal(existsSync(join(ws, f)), false, f)
    assert.equal(spawnSync('sqlite3', [join(ws, 'app.db'), 'select count(*) from t'], { encoding: 'utf8' }).stdout.trim(), '4')
    assert.match(read(ws, 'site', 'index.html'), /v2/)
    assert.ok(existsSync(join(ws, 'dist', 'index.html')))
    assert.equal(existsSync(join(ws, 'hello')), false, 'make clean removed hello')
    assert.match(read(ws, 'dj', 'staticfiles', 'a.css'), /red/, 'collectstatic replaced the changed file')
    assert.match(read(ws, 'package.json'), /1\.0\.1/)
    assert.equal(git(ws, 'log', '--format=%s', '-1'), 'v1.0.1\n')
    assert.equal(existsSync(join(ws, '.git', 'index.lock')), false, 'no lock left')
    assert.ok(existsSync(join(world.root, 'x', 'README.md')), 'the worktree was checked out')
  })

  test('hidden code deleting a file that was there is refused, and the runner names it to the model and the ledger', () => {
    const r = results(run).at(-1)
    assert.equal(read(world.ws, 'keep.txt'), 'mine\n')
    assert.match(r.text, /dsh-allow: refused delete ".*\/keep\.txt" \(unlink; python3, pid \d+\)/, r.text)
    assert.match(r.text, /delete on \S*keep\.txt \(unlink by python3\)/, r.text)
    assert.match(r.text, /`\/allow add delete \S*keep\.txt file`/, r.text)
    const ledger = readFileSync(join(world.dshHome, 'dsh-allow-audit.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const kernel = ledger.filter((l) => l.kind === 'kernel' && l.callId === r.callId)
    assert.deepEqual(kernel.flatMap((k) => k.denied).map((d) => [d.capability, d.operation, d.program, d.path.endsWith('/keep.txt')]), [['delete', 'unlink', 'python3', true]], JSON.stringify(kernel))
  })
})
