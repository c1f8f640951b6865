// benches/floor.c is the lower bound `benches/runner.mjs --floor` sets the
// runner against: each rung must really hold what it says it adds, or the
// floor it measures would be cheaper than any fence.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildFloor } from '../../benches/floor-build.mjs'

const root = process.getuid?.() === 0
const TIMEOUT = 10_000

/** The floor, built once for the file (static with musl where there is one). */
let binary
function floorBinary() {
  if (binary) return binary
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-floor-bin-'))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  chmodSync(dir, 0o755)
  binary = buildFloor(join(dir, 'floor'))
  return binary
}

/** A world for one test: the floor, a folder granted write, one not granted. */
function build(t) {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-floor-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  chmodSync(dir, 0o755)
  const out = floorBinary()
  const work = join(dir, 'work')
  mkdirSync(work, { mode: 0o777 })
  chmodSync(work, 0o777)
  // Somewhere any user may write, that no rung grants.
  const open = join(dir, 'open')
  mkdirSync(open)
  chmodSync(open, 0o777)
  return { floor: out, work, outside: join(open, 'outside') }
}

/** The floor at `rung` running `script` in bash, as this user or as nobody. */
function floorRun({ floor, work }, rung, script, asNobody = false, env = process.env) {
  const reads = ['/usr', '/etc', '/bin', '/lib', '/lib64', '/proc', '/dev'].flatMap((p) => ['-r', p])
  const argv = [floor, String(rung), ...reads, '-w', work, '--', '/bin/bash', '-c', script]
  const [cmd, ...args] = asNobody ? ['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...argv] : argv
  return spawnSync(cmd, args, { encoding: 'utf8', cwd: work, env, timeout: TIMEOUT })
}

const skip = process.platform !== 'linux' ? 'the floor is Linux-only' : false

/** Why the floor cannot run as uid 65534 here, if it cannot. */
function nobodySkip() {
  if (skip) return skip
  if (!root) return 'not root: no other user to become'
  if (!existsSync('/usr/bin/setpriv')) return 'no /usr/bin/setpriv'
  const dir = mkdtempSync(join(tmpdir(), 'dsh-allow-floor-probe-'))
  try {
    chmodSync(dir, 0o755)
    const r = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', floorBinary(), '1', '--', '/bin/true'], { cwd: dir, encoding: 'utf8', timeout: TIMEOUT })
    return r.status === 0 ? false : `uid 65534 cannot have a user namespace with its own /proc here: ${r.stderr.trim()}`
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

for (const asNobody of root ? [false, true] : [false]) {
  const who = asNobody ? ' (as uid 65534, in a user namespace)' : ''
  const skipHere = asNobody ? nobodySkip() : skip

  test(`every rung of the floor hands back the program's exit status${who}`, { skip: skipHere }, (t) => {
    const f = build(t)
    for (const rung of [0, 1, 2, 3]) assert.equal(floorRun(f, rung, 'exit 7', asNobody).status, 7, `rung ${rung}`)
  })

  test(`from rung 1 the program is in pid and mount namespaces of its own, with its own /proc${who}`, { skip: skipHere }, (t) => {
    const f = build(t)
    const script = 'echo $$; ls /proc | grep -c "^[0-9]"'
    const outside = floorRun(f, 0, script, asNobody)
    const [outsidePid, outsideSeen] = outside.stdout.trim().split('\n')
    assert.notEqual(outsidePid, '2', 'rung 0 has no namespace')
    const r = floorRun(f, 1, script, asNobody)
    assert.equal(r.status, 0, r.stderr)
    const [pid, seen] = r.stdout.trim().split('\n')
    assert.equal(pid, '2', 'the init is 1, the program 2')
    // The init, bash, ls and grep: nothing of the machine's.
    assert.ok(Number(seen) <= 4 && Number(outsideSeen) > 4, `its /proc shows its own namespace (${seen} processes; outside ${outsideSeen})`)
  })

  test(`from rung 2 Landlock refuses what no rule grants and allows what one does${who}`, { skip: skipHere }, (t) => {
    const f = build(t)
    const script = `echo in > ${f.work}/in && cat ${f.work}/in; echo out > ${f.outside} && echo WROTE`
    const open = floorRun(f, 1, script, asNobody)
    assert.match(open.stdout, /WROTE/, 'rung 1 fences no file')
    rmSync(f.outside, { force: true })
    const r = floorRun(f, 2, script, asNobody)
    assert.match(r.stdout, /^in$/m, r.stderr)
    assert.doesNotMatch(r.stdout, /WROTE/)
    assert.match(r.stderr, /Permission denied/)
    assert.equal(existsSync(f.outside), false)
  })

  test(`at rung 3 the bounding set is empty and a removal goes through the supervisor${who}`, { skip: skipHere }, (t) => {
    const f = build(t)
    const script = `grep -E "CapBnd|Seccomp:" /proc/self/status; touch ${f.work}/gone && rm ${f.work}/gone && echo removed; test -e ${f.work}/gone || echo absent`
    const r = floorRun(f, 3, script, asNobody)
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /CapBnd:\s+0+\n/)
    assert.match(r.stdout, /Seccomp:\s+2\n/, 'a filter is installed')
    assert.match(r.stdout, /removed\nabsent/)
    // A supervisor told to refuse: the removal is decided there.
    const refuse = { ...process.env, FLOOR_REFUSE: '1' }
    const refused = floorRun(f, 3, `touch ${f.work}/kept; rm ${f.work}/kept || echo refused; test -e ${f.work}/kept && echo kept`, asNobody, refuse)
    assert.match(refused.stdout, /refused\nkept/, refused.stderr)
    assert.match(refused.stderr, /Operation not permitted/)
    const before = floorRun(f, 2, `grep -E "CapBnd|Seccomp:" /proc/self/status; touch ${f.work}/x && rm ${f.work}/x && echo removed`, asNobody, refuse)
    assert.doesNotMatch(before.stdout, /CapBnd:\s+0+\n/, 'rung 2 leaves the bounding set')
    assert.match(before.stdout, /Seccomp:\s+0\n/, 'and installs no filter')
    assert.match(before.stdout, /removed/, 'so nothing there refuses a removal')
  })
}

test('a held floor: calls copy the holder\'s mount namespace (one bind a writable rule) and join its Landlock ruleset', { skip: skip || (!root && 'hold needs root') }, async (t) => {
  const f = build(t)
  const store = join(f.work, 'rules')
  for (let i = 0; i < 30; i += 1) mkdirSync(join(store, `r${i}`), { recursive: true })
  const reads = ['/usr', '/etc', '/bin', '/lib', '/lib64', '/dev'].flatMap((p) => ['-r', p])
  const holder = spawn(f.floor, ['hold', ...reads, '-R', store, '-k', '30'], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.after(() => holder.stdin.end())
  const ready = await new Promise((resolve, reject) => {
    holder.stdout.once('data', (d) => resolve(String(d).trim()))
    holder.once('exit', (code) => reject(new Error(`floor hold exited ${code}`)))
    setTimeout(() => reject(new Error('floor hold never said ready')), TIMEOUT).unref()
  })
  assert.match(ready, /^ready \d+:\d+$/)
  const script = `grep -c " ${store}/" /proc/self/mountinfo; echo a > ${store}/r3/x && echo wrote-r3; echo a > ${store}/r4/x || echo refused-r4`
  const call = () => spawnSync(f.floor, ['3', '-H', ready.split(' ')[1], '--', '/bin/bash', '-c', script], { encoding: 'utf8', timeout: TIMEOUT })
  const r = call()
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.stdout.trim().split('\n'), ['10', 'wrote-r3', 'refused-r4'])
  // The ruleset built afresh at the same number holds the same.
  holder.stdin.write('r')
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.deepEqual(call().stdout.trim().split('\n'), ['10', 'wrote-r3', 'refused-r4'])
  const mine = spawnSync('grep', ['-c', ` ${store}/`, '/proc/self/mountinfo'], { encoding: 'utf8' })
  assert.equal(mine.stdout.trim(), '0', 'the binds stay in the held namespace')
})
