// How much of the policy the kernel really enforces, found by running the
// real runner with a real profile once per process (the spec: "在每个「模式 +
// workspace」的首次调用上实测"), not assumed from the platform. Linux: the
// dsh-allow runner (Landlock); macOS: /usr/bin/sandbox-exec with the core's
// Seatbelt profile.
//
// Levels, strongest first (the spec's 层级 table):
//   full     every read is fenced and rules reopen what they grant
//   guarded  write/create/delete/execute, and reads of user data areas
//   process  write/create/delete/execute
//   writes   write/create/delete
//   off      nothing of ours is applied; the host's own provider confines

import { spawn } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const LEVELS = ['off', 'writes', 'process', 'guarded', 'full']
const ALL = ['read', 'write', 'create', 'delete', 'execute']

/** The capabilities a fence level holds, as the core's `fence` field wants them. */
export function capabilitiesOf(level) {
  switch (level) {
    case 'full':
    case 'guarded': return [...ALL]
    case 'process': return ['write', 'create', 'delete', 'execute']
    case 'writes': return ['write', 'create', 'delete']
    default: return []
  }
}

/** The runner shipped in this package (pkg/bin/<platform>-<arch>/dsh-allow). */
export function defaultRunner() {
  const here = dirname(fileURLToPath(import.meta.url))
  return join(here, '..', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
}

/**
 * Exit codes and stderr prefix of a runner that failed before running
 * anything: 125 the ruleset could not be applied, 122 no usable Landlock.
 */
export const RUNNER_FAILURE_EXITS = [125, 122]
export const RUNNER_FAILURE_PREFIX = 'dsh-allow run: '
/** What the runner says when it cannot enter the namespaces that shut a repository's hooks. */
export const PERSISTENCE_FAILURE = "cannot shut the repository's hooks and config"
/** What the runner says when its namespace could not make the tree read-only outside the writable roots. */
export const METADATA_FAILURE = 'cannot make the file system read-only outside the writable roots'
/** Whether a fence status shuts a repository's hooks and config, as the core's `persistence`. */
export function persistenceOf(status) {
  return status?.persistence?.state === 'shut' ? 'shut' : 'open'
}

/**
 * The argv that runs `argv` under the profile on Linux. With `fenceCache`
 * (a folder among the profile's protected paths) the runner reuses the fence
 * it compiled last time while nothing it was compiled from has changed.
 * With `profileFile` (profiles.js: the profile written to a protected
 * folder) the profile goes by file, whatever its size; else inline (the
 * probe's small profile).
 */
export function runnerArgv(runner, profile, argv, { fenceCache, profileFile } = {}) {
  const cache = fenceCache === undefined ? [] : ['--fence-cache', fenceCache]
  const source = profileFile === undefined ? ['--profile-json', JSON.stringify(profile)] : ['--profile-file', profileFile]
  return [runner, 'run', ...source, ...cache, '--', ...argv]
}

/** The only Seatbelt runner dsh-allow starts (the spec fixes it; elsewhere: off). */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec'
/** How sandbox-exec itself reports a profile it cannot parse or apply (nothing ran). */
export const SEATBELT_FAILURE_PREFIX = 'sandbox-exec: '
/**
 * What sandbox-exec says (exit 71) when the process starting it already runs
 * under a Seatbelt profile that denies anything: Seatbelt does not nest.
 */
export const SEATBELT_NESTED = 'sandbox_apply: Operation not permitted'
/** The fence's reason when DSH itself runs under a Seatbelt profile. */
export const SEATBELT_NESTED_REASON = `DSH itself already runs under a Seatbelt profile, and Seatbelt cannot nest (${SEATBELT_FAILURE_PREFIX}${SEATBELT_NESTED})`

/**
 * The argv that runs `argv` under a Seatbelt profile the core compiled
 * (`{text, params}`): the text stays fixed and every path goes in as a
 * `-D name=value` parameter, never spliced into it. `sandboxExec` is for
 * tests' stand-ins only.
 */
export function seatbeltArgv(sbpl, argv, { sandboxExec = SANDBOX_EXEC } = {}) {
  const params = (sbpl.params ?? []).flatMap(([name, value]) => ['-D', `${name}=${value}`])
  return [sandboxExec, '-p', sbpl.text, ...params, ...argv]
}

/**
 * Probe the Linux runner: one confined shell that tries each capability on
 * a path the probe profile does not grant it, plus a control that must work.
 * Resolves to `{ level, capabilities, fenced: {cap: bool}, why }`.
 */
export async function probeLinuxRunner({ runner, scratchParent, enforce = 'full', persistence = 'shut' }) {
  if (!existsSync(runner)) return offStatus(`runner not found at ${runner}`)
  // A listener of this process, the host: the probe's call must not reach it.
  const listener = createServer()
  const port = await new Promise((resolve) => {
    listener.once('error', () => resolve(undefined))
    listener.listen(0, '127.0.0.1', () => resolve(listener.address().port))
  })
  let root
  try {
    mkdirSync(scratchParent, { recursive: true })
    root = mkdtempSync(join(scratchParent, '.dsh-allow-probe-'))
    const p = (...s) => join(root, ...s)
    for (const d of ['ws', 'home', 'harness', 'elsewhere']) mkdirSync(p(d))
    writeFileSync(p('ws', 'victim'), 'x')
    writeFileSync(p('ws', 'readable'), 'x')
    writeFileSync(p('home', 'secret'), 'x')
    writeFileSync(p('home', 'existing'), 'x')
    writeFileSync(p('elsewhere', 'plain'), 'x')
    copyFileSync('/bin/true', p('home', 'tool'))
    chmodSync(p('home', 'tool'), 0o755)
    // A repository's persistence surfaces: the runner must shut its hooks.
    mkdirSync(p('ws', '.git', 'hooks'), { recursive: true })
    writeFileSync(p('ws', '.git', 'HEAD'), 'ref: refs/heads/main\n')
    const profile = {
      workspace: p('ws'), home: p('home'), harnessHome: p('harness'), platform: 'linux',
      mode: 'workspace-write', rules: [], grants: [], protectedFiles: [], enforce, persistence,
    }
    const q = (s) => `'${s.replaceAll("'", "'\\''")}'`
    const check = (cap, cmd) => `if { ${cmd}; } >/dev/null 2>&1; then echo ${cap}=open; else echo ${cap}=fenced; fi`
    const script = [
      check('control', `cat ${q(p('ws', 'readable'))} && : > ${q(p('ws', 'made'))}`),
      check('read', `cat ${q(p('home', 'secret'))}`),
      check('write', `sh -c ${q(`echo y >> ${q(p('home', 'existing'))}`)}`),
      check('create', `sh -c ${q(`: > ${q(p('home', 'new'))}`)}`),
      check('delete', `rm -f ${q(p('ws', 'victim'))}`),
      check('execute', q(p('home', 'tool'))),
      check('readElsewhere', `cat ${q(p('elsewhere', 'plain'))}`),
      // In its own shell: a failed redirection of `:` does not fail the `if`.
      check('hooks', `sh -c ${q(`: > ${q(p('ws', '.git', 'hooks', 'pre-commit'))}`)}`),
      // A mode outside every writable root: Landlock has no right for it,
      // the runner's read-only tree refuses it.
      check('metadata', `chmod 600 ${q(p('home', 'existing'))}`),
      // The side doors: the host's own port (bash's /dev/tcp), and a
      // signal to this process (the host), outside the call.
      port === undefined ? 'echo hostPort=unknown' : `if command -v bash >/dev/null; then ${check('hostPort', `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}'`)}; else echo hostPort=unknown; fi`,
      // (This process by its pid: the call's parent is its own init.)
      check('signal', `kill -0 ${process.pid}`),
      // This process (the host) among the call's processes: in the call's
      // own process namespace it is not there to read.
      check('processes', `test -r /proc/${process.pid}/cmdline && grep -q . /proc/${process.pid}/cmdline`),
    ].join('\n')
    const run = await spawnCollect(runnerArgv(runner, profile, ['/bin/sh', '-c', script]), { cwd: p('ws') })
    if (RUNNER_FAILURE_EXITS.includes(run.code) || run.stderr.includes(RUNNER_FAILURE_PREFIX)) {
      // No namespaces here: fence without them, and say so loudly (the
      // decision then asks for hidden code in a repository).
      if (persistence === 'shut' && [PERSISTENCE_FAILURE, METADATA_FAILURE].some((f) => run.stderr.includes(f))) {
        const open = await probeLinuxRunner({ runner, scratchParent, enforce, persistence: 'open' })
        const why = firstLine(run.stderr).replace(RUNNER_FAILURE_PREFIX, '')
        return { ...open, persistence: { state: 'open', why }, metadata: { state: 'open', why } }
      }
      return offStatus(`the runner failed: ${firstLine(run.stderr) || `exit ${run.code}`}`)
    }
    const seen = Object.fromEntries(run.stdout.split('\n').filter(Boolean).map((l) => l.split('=')))
    if (seen.control !== 'open') return offStatus(`the runner's control command failed (exit ${run.code}: ${firstLine(run.stderr)})`)
    const fenced = Object.fromEntries(ALL.map((c) => [c, seen[c] === 'fenced']))
    // What the probe saw, never more than the level the runner was asked for.
    const seenLevel = levelOf(fenced, seen.readElsewhere === 'fenced')
    const level = LEVELS[Math.min(LEVELS.indexOf(seenLevel), LEVELS.indexOf(enforce))]
    const why = Object.fromEntries(ALL.map((c) => [c, fenced[c] ? 'the kernel refused it in the probe' : 'the probe ran it unhindered']))
    const status = { level, capabilities: capabilitiesOf(level), fenced, why, enforcement: level === 'full' ? 'full' : 'partial' }
    status.persistence = persistence === 'open'
      ? { state: 'open', why: 'the runner was asked not to shut them' }
      : seen.hooks === 'fenced'
        ? { state: 'shut', why: "the repository's hooks, git config and .gitmodules are read-only in the runner's own mount namespace" }
        : { state: 'open', why: 'the probe wrote into .git/hooks unhindered' }
    status.metadata = persistence === 'open'
      ? { state: 'open', why: 'the runner was asked for no mount namespace, where it makes the tree read-only' }
      : seen.metadata === 'fenced'
        ? { state: 'fenced', why: "modes, owners, times and extended attributes are read-only outside the roots where the fence grants write, create or delete (the runner's own mount namespace)" }
        : { state: 'open', why: 'the probe changed a mode outside the writable roots unhindered' }
    status.processes = seen.processes === 'fenced'
      ? { state: 'hidden', why: "the call has a process namespace of its own: other processes, and the tokens on their command lines, are not in its /proc" }
      : { state: 'visible', why: persistence === 'open' ? 'the runner was asked for no namespaces' : "the probe read the host's command line (the kernel or container refused the call's own process namespace)" }
    status.doors = seen.hostPort === 'fenced' && seen.signal === 'fenced'
      ? { state: 'shut', why: "the host's listeners, other daemons' unix sockets, other processes' signals and the terminal are out of the call's reach (the runner's supervisor, Landlock's scopes)" }
      : { state: 'open', why: seen.hostPort === 'unknown' ? 'the probe could not try the host\'s port (no bash)' : 'the probe reached the host\'s port or signalled outside the call' }
    // Probe files under a folder the baseline opens (a temp dir) prove nothing.
    if (level === 'off') status.reason = `the runner fenced none of the probe's paths under ${scratchParent} (a temp directory the baseline opens?)`
    return status
  } catch (error) {
    return offStatus(`the probe could not run: ${error.message}`)
  } finally {
    listener.close()
    if (root !== undefined) rmSync(root, { recursive: true, force: true })
  }
}

function levelOf(fenced, readsEverywhere) {
  const has = (...caps) => caps.every((c) => fenced[c])
  if (has(...ALL)) return readsEverywhere ? 'full' : 'guarded'
  if (has('write', 'create', 'delete', 'execute')) return 'process'
  if (has('write', 'create', 'delete')) return 'writes'
  return 'off'
}

/**
 * Probe Seatbelt for one tier: `/bin/sh` under the probe profile the core
 * compiles for `enforce` (`compileProfile`, with `host` answering real
 * paths), run by sandbox-exec, tries each capability on a path that profile
 * does not grant, plus a control that must work. A profile that does not
 * compile, one sandbox-exec refuses, or one the shell does not survive (the
 * spec: full aborts /bin/sh on macOS) is off, with the reason; nothing
 * wider is tried in its place. Resolves like probeLinuxRunner.
 * `elsewhere` is a folder outside the user data areas that no probe rule
 * opens (on macOS `/private` itself: only folders inside it are baseline):
 * only the full tier refuses listing it.
 */
export async function probeSeatbelt({ compileProfile, host, scratchParent, enforce = 'guarded', sandboxExec = SANDBOX_EXEC, elsewhere = '/private' }) {
  if (!existsSync(sandboxExec)) return offStatus(`no Seatbelt runner at ${sandboxExec}`)
  if (typeof compileProfile !== 'function') return offStatus('the core has no Seatbelt compiler (compileProfile)')
  let root
  try {
    mkdirSync(scratchParent, { recursive: true })
    // Seatbelt matches the path the kernel resolved: probe real paths.
    root = realpathSync(mkdtempSync(join(scratchParent, '.dsh-allow-probe-')))
    const p = (...s) => join(root, ...s)
    for (const d of ['ws', 'home', 'harness']) mkdirSync(p(d))
    writeFileSync(p('ws', 'victim'), 'x')
    writeFileSync(p('ws', 'readable'), 'x')
    writeFileSync(p('home', 'secret'), 'x')
    writeFileSync(p('home', 'existing'), 'x')
    copyFileSync(existsSync('/usr/bin/true') ? '/usr/bin/true' : '/bin/true', p('home', 'tool'))
    chmodSync(p('home', 'tool'), 0o755)
    // A repository's persistence surfaces: the profile must shut its hooks.
    mkdirSync(p('ws', '.git', 'hooks'), { recursive: true })
    const profile = {
      workspace: p('ws'), home: p('home'), harnessHome: p('harness'), platform: 'macos',
      mode: 'workspace-write', rules: [], grants: [], protectedFiles: [], enforce,
    }
    let sbpl
    try {
      sbpl = compileProfile(profile, host).sbpl
    } catch (error) {
      return offStatus(`the ${enforce} probe profile did not compile: ${error.message}`)
    }
    const check = (cap, cmd) => `if { ${cmd}; } >/dev/null 2>&1; then echo ${cap}=open; else echo ${cap}=fenced; fi`
    const script = [
      check('control', `cat ${shq(p('ws', 'readable'))} && : > ${shq(p('ws', 'made'))}`),
      check('read', `cat ${shq(p('home', 'secret'))}`),
      check('write', `sh -c ${shq(`echo y >> ${shq(p('home', 'existing'))}`)}`),
      check('create', `sh -c ${shq(`: > ${shq(p('home', 'new'))}`)}`),
      check('delete', `rm -f ${shq(p('ws', 'victim'))}`),
      check('execute', shq(p('home', 'tool'))),
      // A folder that is not there proves nothing about reads elsewhere.
      `if [ -d ${shq(elsewhere)} ]; then ${check('readElsewhere', `ls ${shq(elsewhere)}`)}; else echo readElsewhere=absent; fi`,
      check('hooks', `sh -c ${shq(`: > ${shq(p('ws', '.git', 'hooks', 'pre-commit'))}`)}`),
      check('metadata', `chmod 600 ${shq(p('home', 'existing'))}`),
    ].join('\n')
    const run = await spawnCollect(seatbeltArgv(sbpl, ['/bin/sh', '-c', script], { sandboxExec }), { cwd: p('ws') })
    const refused = run.stderr.split('\n').find((l) => l.startsWith(SEATBELT_FAILURE_PREFIX))
    // Not this profile's fault: no profile can be applied from in here.
    if (refused?.includes(SEATBELT_NESTED)) return { ...offStatus(SEATBELT_NESTED_REASON), nested: true }
    if (refused !== undefined) return offStatus(`sandbox-exec refused the ${enforce} profile: ${refused}`)
    const seen = Object.fromEntries(run.stdout.split('\n').filter((l) => l.includes('=')).map((l) => l.split('=')))
    if (seen.control !== 'open') {
      const how = run.signal ? `killed by ${run.signal}` : `exit ${run.code}`
      const said = firstLine(run.stderr)
      return offStatus(`/bin/sh did not survive the ${enforce} profile (${how}${said ? `: ${said}` : ''})`)
    }
    const fenced = Object.fromEntries(ALL.map((c) => [c, seen[c] === 'fenced']))
    const seenLevel = levelOf(fenced, seen.readElsewhere === 'fenced')
    const level = LEVELS[Math.min(LEVELS.indexOf(seenLevel), LEVELS.indexOf(enforce))]
    const why = Object.fromEntries(ALL.map((c) => [c, fenced[c] ? 'Seatbelt refused it in the probe' : 'the probe ran it unhindered']))
    const status = {
      level, capabilities: capabilitiesOf(level), fenced, why, enforcement: level === 'full' ? 'full' : 'partial',
      persistence: seen.hooks === 'fenced'
        ? { state: 'shut', why: "the Seatbelt profile denies writes to the repository's hooks, git config and .gitmodules" }
        : { state: 'open', why: 'the probe wrote into .git/hooks unhindered' },
      metadata: seen.metadata === 'fenced'
        ? { state: 'fenced', why: 'the Seatbelt profile denies file-write-mode, -owner, -times and -xattr outside the writable roots' }
        : { state: 'open', why: 'the probe changed a mode outside the writable roots unhindered' },
    }
    if (level === 'off') status.reason = `Seatbelt fenced none of the probe's paths under ${scratchParent} for ${enforce}`
    else if (level !== enforce) {
      const short = ALL.filter((c) => !fenced[c])
      status.reason = enforce === 'full' && seenLevel === 'guarded' && seen.readElsewhere === 'absent'
        ? `the ${enforce} profile's probe reached ${level}: ${elsewhere} does not exist here, so no read outside the user data areas was tried`
        : `the ${enforce} profile's probe reached ${level}${short.length ? ` (${short.join(', ')} ran unhindered)` : ''}`
    }
    return status
  } catch (error) {
    return offStatus(`the Seatbelt probe could not run: ${error.message}`)
  } finally {
    if (root !== undefined) rmSync(root, { recursive: true, force: true })
  }
}

/** One word for /bin/sh, whatever it holds. */
function shq(s) {
  return `'${s.replaceAll("'", "'\\''")}'`
}

export function offStatus(reason) {
  return {
    level: 'off', capabilities: [], fenced: Object.fromEntries(ALL.map((c) => [c, false])),
    why: Object.fromEntries(ALL.map((c) => [c, reason])), enforcement: 'none', reason,
    persistence: { state: 'open', why: reason }, metadata: { state: 'open', why: reason },
  }
}

/**
 * Apply the configured `enforce` to a probed status: `auto` takes what the
 * probe found; a named level is met by that level or a stronger one, and
 * reported off otherwise (never silently weakened).
 */
export function applyEnforce(enforce, probed) {
  if (enforce === 'off') return offStatus('enforce: off in the dsh-allow config')
  if (enforce === 'auto' || LEVELS.indexOf(probed.level) >= LEVELS.indexOf(enforce)) return probed
  const off = offStatus(`enforce: ${enforce} is required but the kernel probe reached ${probed.level}${probed.reason ? ` (${probed.reason})` : ''}`)
  return probed.nested ? { ...off, nested: true } : off
}

function spawnCollect(argv, { cwd, timeoutMs = 10_000 }) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (b) => { stdout += b })
    child.stderr.on('data', (b) => { stderr += b })
    child.on('error', (error) => {
      clearTimeout(timer)
      resolve({ code: RUNNER_FAILURE_EXITS[0], stdout, stderr: `${RUNNER_FAILURE_PREFIX}${error.message}` })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

function firstLine(text) {
  return text.split('\n').find((l) => l.trim()) ?? ''
}

/**
 * The fence of this process: probed once, in the background, from apply().
 * `current()` is synchronous for confine; `ready()` is awaited by the gate.
 */
export class Fence {
  /**
   * `seatbelt` (macOS): `{ compileProfile, host, sandboxExec }`, the core's
   * SBPL compiler, the host answering its real-path questions and the
   * sandbox-exec to run (/usr/bin/sandbox-exec but for the config's test hook).
   */
  constructor({ platform, runner, enforce, scratchParent, seatbelt = {} }) {
    this.platform = platform
    this.runner = runner
    this.seatbelt = seatbelt
    this.enforce = enforce
    this.scratchParent = scratchParent
    this.status = undefined
    this.probing = undefined
  }

  start() {
    this.probing ??= this.probe().then((status) => {
      this.status = status
      return status
    })
    return this.probing
  }

  async probe() {
    if (this.enforce === 'off') return offStatus('enforce: off in the dsh-allow config')
    if (this.platform === 'macos') return this.seatbeltTiers()
    if (this.platform !== 'linux') {
      return offStatus(`no kernel fence of dsh-allow's own on ${this.platform ?? process.platform}`)
    }
    // auto: the strongest level the runner applies and the probe confirms.
    const wanted = this.enforce === 'auto' ? LEVELS.slice(1).reverse() : [this.enforce]
    let last
    for (const enforce of wanted) {
      last = await probeLinuxRunner({ runner: this.runner, scratchParent: this.scratchParent, enforce })
      if (last.level !== 'off') break
    }
    return applyEnforce(this.enforce, last)
  }

  /**
   * macOS: the strongest tier Seatbelt applies and the probe confirms, each
   * tier probed for real (auto: full, guarded, process, writes; full aborts
   * /bin/sh on macOS, so auto lands on guarded there). A tier is taken only
   * when its own profile's probe reached it: confine compiles the tier
   * taken, so a weaker tier is probed for real rather than inferred from a
   * stronger profile's run. A named tier is met or reported off with the
   * probe's reason. Why stronger tiers were passed over stays in the status.
   */
  async seatbeltTiers() {
    const wanted = this.enforce === 'auto' ? LEVELS.slice(1).reverse() : [this.enforce]
    const declined = {}
    let last
    for (const enforce of wanted) {
      last = await probeSeatbelt({ ...this.seatbelt, scratchParent: this.scratchParent, enforce })
      if (last.level === enforce || wanted.length === 1) break
      declined[enforce] = last.reason ?? `its probe reached ${last.level}`
      // Every tier would be refused the same way.
      if (last.nested) break
    }
    const status = applyEnforce(this.enforce, last)
    if (status.level !== 'off' && Object.keys(declined).length > 0) {
      status.declined = declined
      status.reason = Object.entries(declined).map(([tier, why]) => `${tier} not taken: ${why}`).join('; ')
    }
    return status
  }

  ready() {
    return this.start()
  }

  current() {
    return this.status
  }
}
