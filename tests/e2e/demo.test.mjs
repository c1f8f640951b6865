// `make demo` from a fresh clone: the repository cloned into a temp folder
// (its tracked changes laid over the clone, so what is tested is what would
// be committed), no test-output/ and no demo state. The slow installs this
// test run has already done are lent to the clone — the built package (pkg/)
// and the DSH host (.cache/dsh-host) as links — and then the demo's own steps
// run there: scripts/setup-dsh.sh (its e2e dependencies: npm ci) and
// scripts/demo.sh. The demo must exit 0, answer its cards, and leave `dsh
// web` serving the Approvals tab; `demo.sh --stop` then stops it.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { HOST, PKG, REPO, missingPrerequisite, testOutput } from './harness.mjs'

const git = (args, cwd = REPO) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

/** A clone of HEAD with the working tree's tracked changes and new files laid over it. */
function freshClone() {
  const parent = mkdtempSync(join(tmpdir(), 'dsh-allow-demo-clone-'))
  const clone = join(parent, 'repo')
  git(['clone', '--quiet', '--no-hardlinks', REPO, clone], parent)
  const changed = git(['diff', '--name-only', '-z', 'HEAD']).split('\0').filter(Boolean)
  const added = git(['ls-files', '--others', '--exclude-standard', '-z']).split('\0').filter(Boolean)
  for (const file of [...changed, ...added]) {
    const from = join(REPO, file)
    const to = join(clone, file)
    if (existsSync(from)) {
      mkdirSync(dirname(to), { recursive: true })
      cpSync(from, to)
    } else {
      rmSync(to, { force: true })
    }
  }
  return { parent, clone }
}

function runScript(script, args, { cwd, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn('bash', [script, ...args], { cwd, env: { ...process.env, DSH_ALLOW_KEEP_E2E: '' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (b) => { out += b })
    child.stderr.on('data', (b) => { out += b })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code: code ?? signal, out })
    })
  })
}

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

test('the demo runs from a fresh clone, answers one card of each kind and leaves the Approvals tab served', { timeout: 600_000 }, async (t) => {
  const missing = missingPrerequisite()
  if (missing) {
    t.skip(missing)
    return
  }
  const { parent, clone } = freshClone()
  try {
    assert.equal(existsSync(join(clone, 'test-output')), false, 'a fresh clone has no test-output/')
    symlinkSync(PKG, join(clone, 'pkg'))
    mkdirSync(join(clone, '.cache'))
    symlinkSync(HOST, join(clone, '.cache', 'dsh-host'))

    const setup = await runScript('scripts/setup-dsh.sh', [], { cwd: clone, timeoutMs: 300_000 })
    assert.equal(setup.code, 0, `setup-dsh.sh in the clone:\n${setup.out}`)
    const started = Date.now()
    const demo = await runScript('scripts/demo.sh', [], { cwd: clone, timeoutMs: 400_000 })
    const tookS = ((Date.now() - started) / 1000).toFixed(0)
    assert.equal(demo.code, 0, `demo.sh exited ${demo.code} after ${tookS} s:\n${demo.out}`)

    // Each button once, and what it did.
    assert.match(demo.out, /\$ rm -rf build\n  card: dsh-allow: delete build[^\n]*\n  the human clicked: Deny\n  call: did not run[^\n]*\n  so: build\/ is still there\n  ledger: Denied · decided by human/)
    // Landlock cannot let a command unlink one file without opening its folder:
    // the plugin finishes the removal the user granted, and says so.
    assert.match(demo.out, /\$ rm out\.md\n  card: dsh-allow: delete out\.md[^\n]*\n  the human clicked: Allow once\n  call: ran[^\n]*\n(  note: [^\n]*\n)?  so: out\.md was removed\n  ledger: Allowed · decided by human \(Allow once\)\n/)
    assert.match(demo.out, /\$ echo "ship it" >> ~\/notes\/todo\.txt\n  card: dsh-allow: write ~\/notes\/todo\.txt[^\n]*\n  the human clicked: Always allow\n  call: ran[^\n]*exit 0\n  so: ~\/notes\/todo\.txt was written\n  rules file [^\n]* now holds: write ~\/notes\/todo\.txt\n  ledger: Allowed · decided by human \(Always allow\), stored write ~\/notes\/todo\.txt\n/)
    // The stored rule answers the next write without a card.
    assert.match(demo.out, /\$ echo "and test it" >> ~\/notes\/todo\.txt\n  call: ran[^\n]*exit 0\n  so: ~\/notes\/todo\.txt was written, with no card\n  ledger: Allowed · decided by rule\n/)
    // Nobody is left without an answer, and the kernel's denial names the capability.
    assert.doesNotMatch(demo.out, /no approval channel is available/)
    assert.match(demo.out, /os\.remove\("build\/x"\)'\n  call: [^\n]*\n  ledger: Allowed · decided by fence · then denied by the kernel: delete build\/x\n/)
    assert.match(demo.out, /expanduser\("~\/\.ssh\/id_ed25519"\)[^\n]*\n  call: [^\n]*\n  ledger: Allowed · decided by fence · then denied by the kernel: read ~\/\.ssh\/id_ed25519\n/)

    // dsh web is left serving the tab, and --stop stops it.
    const url = /^URL: +(\S+)/m.exec(demo.out)?.[1]
    const pid = Number(/^PID: +(\d+)/m.exec(demo.out)?.[1])
    assert.ok(url && pid, `the demo prints the URL and PID of dsh web:\n${demo.out}`)
    assert.match(demo.out, /Checked in headless Chromium: the Approvals tab shows \d+ rows/)
    // The README's picture of the tab is taken again: a PNG of the 1400×900 window.
    const picture = join(clone, 'docs', 'approvals-tab.png')
    assert.match(demo.out, /The README's picture of the tab: \S+docs\/approvals-tab\.png/)
    assert.ok(existsSync(picture) && statSync(picture).mtimeMs >= started, 'make demo wrote docs/approvals-tab.png')
    const png = readFileSync(picture)
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG')
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1400, 900])
    assert.ok(alive(pid), 'dsh web is still running after the demo')
    const page = await fetch(url)
    assert.equal(page.status, 200, `${url} answers`)
    const stop = await runScript('scripts/demo.sh', ['--stop'], { cwd: clone, timeoutMs: 60_000 })
    assert.equal(stop.code, 0, stop.out)
    assert.match(stop.out, new RegExp(`stopped the previous demo server \\(pid ${pid}`))
    assert.equal(alive(pid), false, 'demo.sh --stop stops dsh web')
  } finally {
    // Whatever happened, no server of this clone's is left behind.
    try {
      const { pid, root } = JSON.parse(readFileSync(join(testOutput(clone), 'demo-web.json'), 'utf8'))
      if (root.startsWith(testOutput(clone))) {
        process.kill(-pid, 'SIGKILL')
        rmSync(root, { recursive: true, force: true })
      }
    } catch {}
    rmSync(parent, { recursive: true, force: true })
  }
})
