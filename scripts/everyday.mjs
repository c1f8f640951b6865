#!/usr/bin/env node
// Run the everyday-lines corpus (tests/everyday/lines.mjs) the way the plugin
// runs a bash call, against an unfenced control, and count: works with no
// card, works after a card, fails.
//
//   node scripts/everyday.mjs --bin PATH/TO/dsh-allow [--user 65534]
//        [--only REGEX] [--json FILE] [--keep] [--enforce full|guarded] [--base DIR]
//
// Per line: a fresh workspace, home and harness home, the entry's scene run
// unfenced; then the control (the line unfenced) in one copy of that world
// and, in another, what the plugin does: `dsh-allow decide` with the default
// rules (gate.js makeDecider's request); a prompt is answered Allow once (the
// call's carried grants and its proposals as one-shot grants, approval.js);
// then `dsh-allow run` under the profile index.js's profileFor builds, with
// bash -c as DSH runs a bash call. The line works when it exits as the
// control did, the entry's check passes, and it leaves no file the control
// does not. `--bin` is both the decider and the runner: a binary built from
// another commit measures that commit.

import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, lstatSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { HOME, LINES } from '../tests/everyday/lines.mjs'

const TOOLS = process.env.DSH_ALLOW_TOOLS ?? '/usr/local/lib/dsh-allow-tools'
const ALL = ['read', 'write', 'create', 'delete', 'execute']

function options(argv) {
  const o = { bin: undefined, user: undefined, only: undefined, json: undefined, keep: false, enforce: 'full', base: '/home' }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--bin') o.bin = resolve(argv[++i])
    else if (a === '--user') o.user = Number(argv[++i])
    else if (a === '--only') o.only = new RegExp(argv[++i])
    else if (a === '--json') o.json = resolve(argv[++i])
    else if (a === '--keep') o.keep = true
    else if (a === '--enforce') o.enforce = argv[++i]
    else if (a === '--base') o.base = resolve(argv[++i])
    else throw new Error(`unknown option ${a}`)
  }
  if (o.bin === undefined || !existsSync(o.bin)) throw new Error('--bin PATH: the dsh-allow binary to measure (decide and run)')
  return o
}

const o = options(process.argv.slice(2))
const PATH = [`${TOOLS}/venv/bin`, `${TOOLS}/node/node_modules/.bin`, '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(':')
// Where a user's projects are (/home, a user data area the read fence
// keeps), outside the temp folders (the baseline opens those fully) and
// outside any repository (tools look upwards for one: black reads its
// .gitignore, cargo its workspace), reachable by the unprivileged user.
const BASE = join(o.base, `.dsh-allow-everyday-${process.pid}`)

/** Run argv as the measured user; returns { code, stdout, stderr }. */
function run(argv, { cwd, env, timeout = 180_000 }) {
  const full = o.user === undefined ? argv : ['/usr/bin/setpriv', `--reuid=${o.user}`, `--regid=${o.user}`, '--clear-groups', ...argv]
  const r = spawnSync(full[0], full.slice(1), { cwd, env, encoding: 'utf8', timeout, maxBuffer: 64 << 20 })
  return { code: r.status ?? (r.signal ? 128 : 1), stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? `\n${r.error.message}` : '') }
}

/** One world: the entry's own folder with ws/, home/, harness/. */
function world(dir, entry) {
  rmSync(dir, { recursive: true, force: true })
  const w = { dir, ws: join(dir, 'ws'), home: join(dir, 'home'), harness: join(dir, 'harness') }
  for (const d of [w.ws, w.home, w.harness]) mkdirSync(d, { recursive: true })
  writeFileSync(join(w.harness, 'dsh-allow.json'), '{"version":3,"rules":[]}\n')
  for (const [rel, text] of Object.entries({ ...HOME, ...(entry.files ?? {}) })) {
    const p = resolve(w.ws, rel)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p, text)
  }
  if (o.user !== undefined) spawnSync('chown', ['-R', `${o.user}:${o.user}`, dir])
  w.env = {
    PATH, HOME: w.home, LANG: 'C.UTF-8', USER: o.user === undefined ? 'root' : 'nobody',
    GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
    GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true',
    npm_config_update_notifier: 'false', CARGO_TERM_COLOR: 'never', CARGO_BUILD_JOBS: '2',
    // What the runner sets in every fenced call (no_shared_caches): the control sees the same.
    PYTHONDONTWRITEBYTECODE: '1', NODE_DISABLE_COMPILE_CACHE: '1',
  }
  return w
}

function scene(w, entry) {
  for (const s of entry.scene ?? []) {
    const r = run(['/bin/bash', '-c', s], { cwd: w.ws, env: w.env })
    if (r.code !== 0) return `the scene failed at \`${s}\` (exit ${r.code}): ${firstLines(r.stderr + r.stdout)}`
  }
  return undefined
}

/** Every entry below `dir` (files, links, folders), relative, as a set. */
function entries(dir, ignore) {
  const out = new Set()
  const walk = (d) => {
    let names = []
    try {
      names = readdirSync(d)
    } catch {
      return
    }
    for (const n of names) {
      const p = join(d, n)
      const rel = p.slice(dir.length + 1)
      if (ignore?.test(rel)) continue
      out.add(rel)
      if (lstatSync(p).isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out
}

/** The plugin's request for one call (gate.js makeDecider), default rules. */
function decideRequest(w, line, extra = []) {
  return {
    command: line, cwd: w.ws, workspace: w.ws, home: w.home, harnessHome: w.harness,
    platform: 'linux', mode: 'workspace-write', rules: [], grants: extra, commands: [],
    protectedFiles: [join(w.harness, 'dsh-allow.json')], fence: ALL, persistence: 'shut', sockets: {},
  }
}

function decide(w, line) {
  // The host's PATH and home are the call's (FsHost::from_env looks programs up there).
  const r = spawnSync(o.bin, ['decide'], { input: JSON.stringify(decideRequest(w, line)), encoding: 'utf8', env: w.env })
  if (r.status !== 0) throw new Error(`decide failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/** The fenced call: the plugin's profile (index.js profileFor) and `dsh-allow run`. */
function fenced(w, line, d) {
  const carried = [...(d.commandGrant?.rules ?? []), ...(d.fenceGrants ?? [])]
  const once = d.decision === 'prompt' ? (d.proposals ?? []).map((p, i) => ({ id: `once-${i + 1}`, path: p.path, recursive: p.recursive, access: { ...p.access }, hits: 0, createdAt: '' })) : []
  const profile = {
    workspace: w.ws, home: w.home, harnessHome: w.harness, platform: 'linux', mode: 'workspace-write',
    rules: [], grants: [...carried, ...once], protectedFiles: [join(w.harness, 'dsh-allow.json')], enforce: o.enforce,
    folders: d.folders ?? [], kept: d.kept ?? [], persistence: 'shut', hostPids: [], hostPorts: [],
  }
  const file = join(w.harness, 'profile.json')
  writeFileSync(file, JSON.stringify(profile))
  chmodSync(file, 0o644)
  return run([o.bin, 'run', '--profile-file', file, '--', 'bash', '-c', line], { cwd: w.ws, env: w.env })
}

function firstLines(text, n = 3) {
  return text.split('\n').map((l) => l.trim()).filter(Boolean).slice(0, n).join(' / ').slice(0, 300)
}

function measure(entry) {
  const missing = (entry.needs ?? []).filter((p) => spawnSync('/bin/sh', ['-c', `command -v ${p}`], { env: { PATH } }).status !== 0)
  if (missing.length > 0) return { id: entry.id, family: entry.family, outcome: 'skip', why: `${missing.join(', ')} not on PATH (${PATH}); scripts/setup.sh installs them` }
  const control = world(join(BASE, entry.id, 'control'), entry)
  const f = world(join(BASE, entry.id, 'fenced'), entry)
  for (const w of [control, f]) {
    const broken = scene(w, entry)
    if (broken) return { id: entry.id, family: entry.family, outcome: 'broken', why: broken }
  }
  const c = run(['/bin/bash', '-c', entry.line], { cwd: control.ws, env: control.env })
  const want = entries(control.ws, entry.ignore)
  const cCheck = run(['/bin/bash', '-c', entry.check], { cwd: control.ws, env: control.env })
  if (c.code !== 0 || cCheck.code !== 0) {
    return { id: entry.id, family: entry.family, outcome: 'broken', why: `the control failed (exit ${c.code}, check ${cCheck.code}): ${firstLines(c.stderr + c.stdout + cCheck.stderr)}` }
  }
  const d = decide(f, entry.line)
  const card = d.decision === 'prompt'
  const row = { id: entry.id, family: entry.family, line: entry.line, decision: d.decision, reason: d.reason }
  if (d.decision === 'refuse') return { ...row, outcome: 'fails', card: false, why: d.reason }
  const r = fenced(f, entry.line, d)
  // What each run left, before a check (which may itself tidy: sqlite3
  // removes a -wal it checkpoints).
  const litter = [...entries(f.ws, entry.ignore)].filter((p) => !want.has(p))
  const check = run(['/bin/bash', '-c', entry.check], { cwd: f.ws, env: f.env })
  const named = (r.stderr.match(/^dsh-allow: refused .*$/gm) ?? []).slice(0, 3)
  const works = r.code === c.code && check.code === 0 && litter.length === 0
  const why = works ? undefined : [
    r.code !== c.code ? `exit ${r.code}` : undefined,
    check.code !== 0 ? 'check failed' : undefined,
    litter.length ? `left ${litter.slice(0, 3).join(', ')}` : undefined,
    firstLines(r.stderr),
  ].filter(Boolean).join('; ')
  return { ...row, outcome: works ? (card ? 'card' : 'no-card') : 'fails', card, named, why, proposals: d.proposals, fenceGrants: d.fenceGrants }
}

const picked = LINES.filter((e) => o.only === undefined || o.only.test(e.id) || o.only.test(e.family))
mkdirSync(BASE, { recursive: true })
if (o.user !== undefined) spawnSync('chown', [`${o.user}:${o.user}`, BASE])
const rows = []
for (const entry of picked) {
  let row
  try {
    row = measure(entry)
  } catch (error) {
    row = { id: entry.id, family: entry.family, outcome: 'broken', why: error.message }
  }
  rows.push(row)
  const mark = { 'no-card': 'ok     ', card: 'ok+card', fails: row.card ? 'FAIL+cd' : 'FAIL   ', skip: 'SKIP   ', broken: 'BROKEN ' }[row.outcome]
  const tail = row.outcome === 'no-card' || row.outcome === 'card' ? '' : ` — ${row.why}`
  console.log(`${mark} ${row.family.padEnd(9)} ${row.id}${tail}${row.named?.length ? `\n          runner: ${row.named.join(' | ')}` : ''}`)
  if (!o.keep) rmSync(join(BASE, entry.id), { recursive: true, force: true })
}
if (!o.keep) rmSync(BASE, { recursive: true, force: true })

const counted = rows.filter((r) => r.outcome !== 'skip' && r.outcome !== 'broken')
const by = (rs) => ({
  lines: rs.length,
  noCard: rs.filter((r) => r.outcome === 'no-card').length,
  card: rs.filter((r) => r.outcome === 'card').length,
  fails: rs.filter((r) => r.outcome === 'fails').length,
  failsNoCard: rs.filter((r) => r.outcome === 'fails' && !r.card).length,
  failsNamed: rs.filter((r) => r.outcome === 'fails' && r.named?.length).length,
})
const families = [...new Set(counted.map((r) => r.family))]
const summary = { bin: o.bin, user: o.user ?? 0, enforce: o.enforce, total: by(counted), families: Object.fromEntries(families.map((f) => [f, by(counted.filter((r) => r.family === f))])), skipped: rows.filter((r) => r.outcome === 'skip').map((r) => r.id), broken: rows.filter((r) => r.outcome === 'broken').map((r) => `${r.id}: ${r.why}`) }
console.log('\nfamily     lines  no card  after a card  fails (no card, runner named)')
for (const [name, s] of [...Object.entries(summary.families), ['ALL', summary.total]]) {
  console.log(`${name.padEnd(10)} ${String(s.lines).padStart(5)}  ${String(s.noCard).padStart(7)}  ${String(s.card).padStart(12)}  ${String(s.fails).padStart(5)} (${s.failsNoCard}, ${s.failsNamed})`)
}
if (summary.skipped.length) console.log(`SKIPPED (not installed): ${summary.skipped.join(', ')}`)
if (summary.broken.length) console.log(`BROKEN (the control or the scene failed):\n  ${summary.broken.join('\n  ')}`)
if (o.json) writeFileSync(o.json, JSON.stringify({ summary, rows }, null, 1))
