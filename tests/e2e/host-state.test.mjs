// What the DSH host and its later runs read stays out of a fenced call's
// reach, in the real DSH 0.1.0-rc.8 host with dsh-allow installed and the
// Landlock runner up (issue 39, parts 1, 3, 4, 5, 6, 9). A scripted model's
// bash calls run hidden inline Python doing what the attacks did; each is
// run again in a danger-full-access session (no fence of ours, the host's
// own behaviour unchanged) as the control that shows the attack lands.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { approvals, cleanup, makeWorld, missingPrerequisite, results, runDsh, runnerWorks } from './harness.mjs'

const missing = missingPrerequisite() ?? (runnerWorks() ? undefined : 'the Landlock runner cannot run here')
const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const python = (code) => bash(`python3 -c '${code.replaceAll("'", "'\\''")}'`)
const FULL = 'danger-full-access'

// Plants a link to ~/.bashrc.d in place of every session's spill folder of
// every spill root it finds, for every session id it can learn (the
// harness home lists them; DSH_SESSION_ID where it is not cleared). Only
// roots made since the test began: other DSH processes on this machine are
// left alone.
const swapSpill = (since) => String.raw`
import glob, hashlib, json, os
home = os.path.expanduser("~")
ids = set(filter(None, [os.environ.get("DSH_SESSION_ID")]))
for root, dirs, files in os.walk(os.path.join(os.environ.get("DSH_HOME", home + "/.dsh"), "sessions")):
    ids.update(d[len("session-"):] for d in dirs if d.startswith("session-"))
done = []
for root in glob.glob("/tmp/dsh-spill-*"):
    try:
        if os.stat(root).st_mtime < ${since}:
            continue
    except OSError:
        pass
    for i in ids:
        s = os.path.join(root, "session-" + hashlib.sha256(i.encode()).hexdigest()[:12])
        try:
            if os.path.isdir(s) and not os.path.islink(s):
                os.rename(s, s + "-gone")
            os.symlink(home + "/.bashrc.d", s)
            done.append(s)
        except OSError as e:
            pass
print(json.dumps({"ids": len(ids), "planted": done}))
`
const LONG = python('print("echo pwned # " + "A" * 60000)')

describe('the host\'s temp folders, logs and start-up files in a real DSH session', { skip: missing }, () => {
  let world
  before(() => {
    world = makeWorld('host-state')
    mkdirSync(join(world.home, '.bashrc.d'), { recursive: true })
  })
  after(() => cleanup(world))

  test('a fenced call cannot swap its session\'s spill folder for a link; unfenced, the host writes the call\'s text into ~/.bashrc.d', async () => {
    const rc = join(world.home, '.bashrc.d')
    const since = Math.floor(Date.now() / 1000) - 1
    const SWAP_SPILL = swapSpill(since)
    const fenced = await runDsh(world, { script: [python(SWAP_SPILL), LONG] })
    const [swap, long] = results(fenced)
    assert.equal(swap.isError, false, swap.text)
    // (Only the host's own folders count: mkdtemp's six letters and digits.)
    const hosts = (planted) => planted.filter((p) => /^\/tmp\/dsh-spill-[A-Za-z0-9]{6}\//.test(p))
    assert.deepEqual(hosts(JSON.parse(swap.text.trim().split('\n').pop()).planted), [], `the fence let a link in: ${swap.text}`)
    const stored = long.text.match(/stored at: (\S+?)\. /)?.[1]
    assert.ok(stored, `the long output was spilled: ${long.text.slice(-300)}`)
    assert.equal(lstatSync(join(stored, '..')).isSymbolicLink(), false)
    assert.match(readFileSync(stored, 'utf8'), /^echo pwned/)
    assert.deepEqual(readdirSync(rc), [], 'nothing landed in ~/.bashrc.d')

    const open = await runDsh(world, { mode: FULL, script: [python(SWAP_SPILL), LONG] })
    const [openSwap] = results(open)
    assert.ok(hosts(JSON.parse(openSwap.text.trim().split('\n').pop()).planted).length > 0, `control: ${openSwap.text}`)
    const landed = readdirSync(rc)
    assert.equal(landed.length, 1, `control: the host followed the link: ${landed}`)
    assert.match(readFileSync(join(rc, landed[0]), 'utf8'), /^echo pwned/)
    for (const link of JSON.parse(openSwap.text.trim().split('\n').pop()).planted) rmSync(link, { force: true })
    rmSync(rc, { recursive: true, force: true })
    mkdirSync(rc)
  })

  test('a later call reads no earlier session\'s log, the harness home\'s .env or the audit ledger', async () => {
    writeFileSync(join(world.dshHome, '.env'), 'E2E_PROVIDER_KEY=sk-live-e2e-dshhome\n')
    await runDsh(world, { script: [bash('echo sk-live-e2e-printed-once')] })
    const READ = String.raw`
import json, os
h = os.environ.get("DSH_HOME")
tried = {}
for root, dirs, files in os.walk(os.path.join(h, "sessions")):
    for f in files:
        p = os.path.join(root, f)
        try:
            tried[p] = len(open(p, "rb").read())
        except OSError as e:
            tried[p] = "refused: %s" % e.strerror
for f in (".env", "dsh-allow-audit.ndjson"):
    try:
        tried[f] = len(open(os.path.join(h, f), "rb").read())
    except OSError as e:
        tried[f] = "refused: %s" % e.strerror
print(json.dumps(tried))
`
    const fenced = results(await runDsh(world, { script: [python(READ)] }))[0]
    const seen = JSON.parse(fenced.text.trim().split('\n').pop())
    const logs = Object.keys(seen).filter((p) => p.includes('/sessions/'))
    assert.ok(logs.length >= 2, `the earlier sessions' logs are there to try: ${fenced.text}`)
    for (const [p, r] of Object.entries(seen)) assert.match(String(r), /^refused: Permission denied/, `${p} was read: ${fenced.text}`)

    const open = JSON.parse(results(await runDsh(world, { mode: FULL, script: [python(READ)] }))[0].text.trim().split('\n').pop())
    for (const [p, r] of Object.entries(open)) assert.equal(typeof r, 'number', `control: ${p}: ${r}`)
  })

  test('variables that name code, taken from the workspace\'s .env, are not in a fenced call; unfenced, git status runs the planted fsmonitor', async () => {
    execFileSync('git', ['init', '-q', world.ws])
    writeFileSync(join(world.ws, '.env'), 'PORT=3000\nGIT_CONFIG_PARAMETERS="\'core.fsmonitor\'=\'touch fsmonitor-ran\'"\n')
    const ran = join(world.ws, 'fsmonitor-ran')
    const fenced = await runDsh(world, { script: [bash('git status --short'), bash('echo "PORT=$PORT"')] })
    const [status, port] = results(fenced)
    assert.equal(status.isError, false, status.text)
    assert.equal(existsSync(ran), false, 'the planted fsmonitor ran in a fenced call')
    assert.match(port.text, /PORT=3000/, 'plain variables from the .env stay')
    assert.equal(approvals(fenced).length, 0, 'no card')

    await runDsh(world, { mode: FULL, script: [bash('git status --short')] })
    assert.equal(existsSync(ran), true, 'control: unfenced, git status ran the fsmonitor from the .env')
    rmSync(ran)
    rmSync(join(world.ws, '.env'))
  })

  test('a tracked .env that differs between branches: git checkout switches it with no card', async () => {
    const git = (...args) => execFileSync('git', ['-C', world.ws, ...args], {
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' },
    }).toString()
    if (!existsSync(join(world.ws, '.git'))) git('init', '-q')
    writeFileSync(join(world.ws, '.env'), 'MODE=one\n')
    git('add', '.env')
    git('commit', '-q', '-m', 'one')
    git('checkout', '-q', '-b', 'two')
    writeFileSync(join(world.ws, '.env'), 'MODE=two\n')
    git('commit', '-q', '-am', 'two')
    git('checkout', '-q', '-')
    const run = await runDsh(world, { script: [bash('git checkout two'), bash('cat .env')] })
    const [checkout, cat] = results(run)
    assert.equal(checkout.isError, false, checkout.text)
    assert.match(cat.text, /MODE=two/, 'the checkout replaced the tracked .env')
    assert.equal(approvals(run).length, 0, 'no card')
    git('checkout', '-q', '-')
    git('rm', '-q', '--cached', '.env')
    git('commit', '-q', '-m', 'untrack')
    rmSync(join(world.ws, '.env'))
  })

  test('hidden code cannot plant a workspace .env for the next start; a line that shows the write gets it', async () => {
    const env = join(world.ws, '.env')
    writeFileSync(join(world.ws, '.env.example'), 'PORT=3000\n')
    const run = await runDsh(world, {
      script: [
        python('open(".env", "w").write("GIT_CONFIG_PARAMETERS=x\\n"); print("made")'),
        bash('test -e .env && echo present || echo absent'),
        bash("cp .env.example .env && sed -i 's/PORT=3000/PORT=4000/' .env"),
      ],
    })
    const [planted, after, shown] = results(run)
    assert.match(planted.text, /dsh-allow: removed .*\.env/, planted.text)
    assert.match(after.text, /absent/)
    assert.equal(shown.isError, false, shown.text)
    assert.equal(readFileSync(env, 'utf8'), 'PORT=4000\n')
    assert.equal(approvals(run).length, 0, 'no card for the line that shows it')
    rmSync(env)
  })

  test('a card on a link names where it leads, and Allow once on rm removes the link, never the thesis', async () => {
    const thesis = join(world.home, 'Documents', 'thesis.tex')
    mkdirSync(join(world.home, 'Documents'), { recursive: true })
    writeFileSync(thesis, '\\chapter{Four years}\n')
    symlinkSync(thesis, join(world.ws, 'old'))
    const run = await runDsh(world, {
      script: [bash('echo x >> old'), bash('rm old'), python(`import os\ntry:\n    os.unlink(${JSON.stringify(thesis)}); print("removed")\nexcept OSError as e:\n    print("refused", e.strerror)`)],
      answerFor: { 'echo x >> old': 'reject', 'rm old': 'once' },
    })
    const [write, rm, hidden] = results(run)
    const asked = approvals(run)
    assert.match(asked[0].reason, new RegExp(`write ${thesis.replaceAll('.', '\\.')}`), `the card names the thesis: ${asked[0].reason}`)
    assert.equal(write.isError, true)
    assert.match(asked[1].reason, /delete \S+\/ws\/old\b/, asked[1].reason)
    assert.equal(rm.isError, false, rm.text)
    assert.equal(existsSync(join(world.ws, 'old')), false, 'the link is gone')
    assert.match(hidden.text, /refused/, hidden.text)
    assert.equal(readFileSync(thesis, 'utf8'), '\\chapter{Four years}\n', 'the thesis is intact')
  })

  test('npx\'s cache of code is not planted by a fenced call; unfenced it is', async () => {
    mkdirSync(join(world.home, '.npm', '_cacache'), { recursive: true })
    const PLANT = 'import os, json\np = os.path.expanduser("~/.npm/_npx/0a1b2c3d/node_modules/cowsay")\ntry:\n    os.makedirs(p, exist_ok=True); open(p + "/index.js", "w").write("planted"); print("planted")\nexcept OSError as e:\n    print("refused", e.strerror)'
    const fenced = results(await runDsh(world, { script: [python(PLANT)] }))[0]
    assert.match(fenced.text, /refused/, fenced.text)
    assert.equal(existsSync(join(world.home, '.npm', '_npx', '0a1b2c3d')), false)
    const open = results(await runDsh(world, { mode: FULL, script: [python(PLANT)] }))[0]
    assert.match(open.text, /planted/, `control: ${open.text}`)
  })

  test('a deployed application\'s .env in /opt is not read by a fenced call', { skip: process.getuid?.() !== 0 && 'needs root to put a file in /opt' }, async () => {
    const dir = `/opt/dsh-allow-e2e-${process.pid}`
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, '.env'), 'DB_PASSWORD=hunter2\n')
    try {
      const READ = `import sys\ntry:\n    print(open("${dir}/.env").read())\nexcept OSError as e:\n    print("refused", e.strerror)`
      const fenced = results(await runDsh(world, { script: [python(READ)] }))[0]
      assert.match(fenced.text, /refused Permission denied/, fenced.text)
      const open = results(await runDsh(world, { mode: FULL, script: [python(READ)] }))[0]
      assert.match(open.text, /hunter2/, `control: ${open.text}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
