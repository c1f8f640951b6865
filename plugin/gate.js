// The gate on `tools/pre-execute`: every bash (and pwsh) call is decided by
// the core before it runs, and the file-writing tools are kept off the
// permission store. Allow continues the waterfall; refuse denies with a
// reason that tells the model not to look for another way; prompt asks
// through DSH's approval service with a reason that begins `dsh-allow: ` and
// names the operation and path.

import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import { expandHomePath } from '@deepseek-ai/dsh-home-paths'
import { nodeHost } from './core.js'
import { persistenceOf } from './fence.js'
import { lostRecordText } from './ledger.js'
import { shown } from './text.js'

export const SHELL_TOOLS = new Set(['bash', 'pwsh'])
export const FILE_WRITE_TOOLS = new Set(['write', 'edit', 'str_replace_editor'])

/** DSH's escalation ladder: a `sandbox_permissions` value counts only if strictly wider. */
const WIDER = { 'read-only': ['workspace-write', 'danger-full-access'], 'workspace-write': ['danger-full-access'] }

/**
 * Builds the core's request for one call and asks the core. The escalated
 * mode is what the command would run under if the user approves the
 * escalation (DSH asks for that itself, inside the tool body).
 */
export function makeDecider({ core, host, store, fence, settings, policyOf, protectedFiles, managed }) {
  // The guard decides each call again right after the gate. When its request
  // is the gate's to the byte and no tool call has finished since (the only
  // thing in a session that moves files between the two), the gate's answer
  // is the answer: the core would only ask again whether each named path is
  // as it was, which the kernel fence covers from here on as it does after
  // the guard. Saves a decide per call (~0.4 ms in the host).
  let last
  decideCall.toolCallEnded = () => {
    last = undefined
  }
  return decideCall

  function decideCall(exec, extraGrants = []) {
    const args = exec.arguments ?? {}
    const session = exec.agent?.session
    const policy = policyOf(session)
    const escalated = WIDER[policy.mode]?.includes(args.sandbox_permissions) ? args.sandbox_permissions : undefined
    const mode = escalated ?? policy.mode
    const base = session?.header?.cwd ?? policy.workspaceRoot
    const cwd = resolve(base, typeof args.workdir === 'string' ? expandHomePath(args.workdir) : '.')
    const load = store.load()
    const managedPolicy = managed?.load().policy
    const request = {
      command: args.command,
      cwd,
      workspace: policy.workspaceRoot,
      home: settings.home,
      harnessHome: settings.harnessHome,
      platform: settings.platform,
      mode,
      // Deployment grants stand like stored rules: only this call's own
      // grants (a card's Allow once) answer what the managed policy asks.
      rules: settings.grants.length === 0 ? load.rules : [...load.rules, ...settings.grants],
      grants: extraGrants,
      commands: load.commands,
      protectedFiles: protectedFiles(),
      fence: mode === 'danger-full-access' ? [] : (fence.current()?.capabilities ?? []),
      // The tier the probe found, which a managed requireFence is held to.
      ...(fence.current()?.level === undefined ? {} : { fenceLevel: fence.current().level }),
      persistence: persistenceOf(fence.current()),
      // The daemons' sockets this host reaches: a line that only asks one
      // (docker ps, ssh -T git@host) is granted that socket for the call.
      sockets: settings.sockets?.() ?? {},
      // The administrator's managed policy (managed.js), when a file of it is there.
      ...(managedPolicy === undefined ? {} : { managed: managedPolicy }),
    }
    // The stored rules by identity (the store hands out one frozen load per
    // version of the file): the JSON of 10,000 rules costs ~4 ms a call.
    const key = JSON.stringify({ ...request, rules: undefined, commands: undefined })
    if (last !== undefined && last.callId === exec.callId && last.key === key && last.load === load) return last.d
    const d = { request, decision: core.decide(request, host), load, policy, mode }
    last = { callId: exec.callId, key, load, d }
    return d
  }
}

/** "delete /w/build; create,write /w/out" — what is missing, grouped by path. */
export function describeEffects(pairs) {
  const byPath = new Map()
  for (const { path, capability } of pairs) {
    if (!byPath.has(path)) byPath.set(path, [])
    if (!byPath.get(path).includes(capability)) byPath.get(path).push(capability)
  }
  return [...byPath].map(([path, caps]) => `${caps.join(',')} ${path}`).join('; ')
}

/**
 * The card's text. Paths and reasons are shown with control characters
 * escaped (text.js): a name holding a newline must not split the card.
 * `workspaceNote` says why the session has no workspace grant, if it has none.
 */
export function promptReason(decision, load, workspaceNote) {
  const named = describeEffects(decision.missing ?? [])
  let reason = `dsh-allow: ${named || decision.reason || 'this command needs a permission that is not granted'}`
  if (named && decision.reason) reason += ` (${decision.reason})`
  // Where the kernel cannot carry exactly this grant, the card says what it carries instead.
  for (const w of decision.widened ?? []) reason += ` — Allow once: ${w}`
  if (load.error !== undefined) reason += ` — the rules file ${load.file ?? ''} cannot be used (${load.error}), so every call asks`
  if (workspaceNote) reason += ` — ${workspaceNote}`
  return shown(reason)
}

export function refuseReason(decision) {
  const refused = (decision.effects ?? []).filter((e) => e.refused)
  const named = describeEffects(refused)
  const why = (decision.reason ?? '').replace(/^refused:\s*/i, '').replace(/\.$/, '')
  return `dsh-allow: refused ${shown(named || 'this command')}${why ? ` — ${shown(why)}` : ''}. ` +
    'This is the permission policy, not an error: do not retry it with another command, tool or path; ' +
    'tell the user what was refused and let them decide.'
}

/**
 * The stored rules and grants that granted some effect of this decision, and
 * a matched command grant's roots: they bound what the program itself writes,
 * which the command line does not show.
 */
export function decidedRules(d) {
  if (d?.decision === undefined) return []
  const known = [...(d.request.rules ?? []), ...(d.request.grants ?? [])]
  const ids = new Set((d.decision.effects ?? []).filter((e) => e.granted && e.ruleId).map((e) => e.ruleId))
  return [...known.filter((r) => ids.has(r.id)), ...(d.decision.commandGrant?.rules ?? [])]
}

/**
 * The listeners. `asks` records the prompts we raise (for the approval
 * listener), `grants` serializes each session while a one-shot grant lives.
 */
export function makeGate({ decide, decideRequest, grants, asks, ledger, fence, policyOf, protectedFiles, supported, platform, explainDenials, withheld, invalidate, workspaceNote, managedDenial }) {
  /**
   * An error that does not say which operation failed (Python's
   * `PermissionError: … Permission denied: 'P'`): when P is an existing file
   * the policy does not let the call read, the kernel refused the read (an
   * open fails before anything else). Otherwise it stays unnamed.
   */
  const unreadable = (request, path) => {
    try {
      if (decideRequest === undefined || !statSync(path).isFile()) return undefined
      const d = decideRequest({ ...request, command: `cat -- '${path.replaceAll("'", "'\\''")}'`, commands: [] })
      return d.decision === 'allow' ? undefined : 'read'
    } catch {
      return undefined
    }
  }
  /**
   * A denial as the ledger records it: the capability the error names; else
   * a read of a file the call could not read; else what the call's fence
   * did not grant on that path — that one capability when it is the only
   * one, or the list of them.
   */
  const named = (request, path, capability, readOnly = false) => {
    // A read-only mount (the Linux runner's tree outside the writable
    // roots) refuses only changes: never a read.
    const read = capability ?? (readOnly ? undefined : unreadable(request, path))
    if (read !== undefined) return { path, capability: read }
    let caps = []
    try {
      caps = (withheld?.(request, path) ?? []).filter((c) => !readOnly || CHANGES.includes(c))
    } catch {
      // Naming is a courtesy: the denial is recorded either way.
    }
    return caps.length === 1 ? { path, capability: caps[0] } : { path, capability: undefined, withheld: caps }
  }
  /** callId → the decision the call ran under (the guard's), until it settles. */
  const ranUnder = new Map()
  /** Calls refused because their record could not be written: their result already says so. */
  const toldUnrecorded = new Set()
  const refusesUnrecorded = () => ledger.failure !== 'warn'
  /** The refusal of a call whose record is lost (auditFailure: refuse), or undefined. */
  const unrecordedRefusal = (exec) => {
    const lost = ledger.lostFor?.(exec.callId)
    if (lost === undefined || !refusesUnrecorded()) return undefined
    toldUnrecorded.add(exec.callId)
    return lostRecordText(lost, 'refused', ledger.required === true)
  }
  // Returns what kept the record out of the ledger, if anything did.
  const record = (exec, d, outcome, extra = {}) => ledger.append({
    kind: 'decision', time: new Date().toISOString(), sessionId: exec.agent?.session?.id, callId: exec.callId,
    tool: exec.name, command: exec.arguments?.command, cwd: d?.request?.cwd, mode: d?.mode, decision: outcome,
    workspace: d?.request?.workspace, home: d?.request?.home,
    effects: d?.decision?.effects, missing: d?.decision?.missing, reason: d?.decision?.reason,
    unknown: d?.decision?.unknown, fenced: (d?.request?.fence ?? []).length > 0,
    // The fold reads the grant's name; only an allow is the grant's doing.
    rules: decidedRules(d), commandGrant: outcome === 'allow' ? d?.decision?.commandGrant?.name : undefined,
    // What the kernel will carry wider than granted (a path not there yet).
    widened: d?.decision?.widened?.length ? d.decision.widened : undefined,
    rulesError: d?.load?.error,
    // The managed policy refused or asked: the ledger's decided-by is `managed`.
    managed: d?.decision?.managed?.decided === true ? true : undefined,
    ...extra,
  })

  async function preExecute(exec, next) {
    if (FILE_WRITE_TOOLS.has(exec.name)) return fileGate(exec, next)
    if (!SHELL_TOOLS.has(exec.name) || !supported) return next()
    const command = exec.arguments?.command
    if (typeof command !== 'string') return next()
    await fence.ready()
    const sessionId = exec.agent?.session?.id
    if (sessionId !== undefined && !(await grants.turn(sessionId, exec.callId, exec.signal))) {
      return { kind: 'deny', reason: 'dsh-allow: the call was cancelled while another call of this session waited for approval' }
    }
    let d
    let outcome
    try {
      d = decide(exec)
      outcome = d.decision.decision
      // A rules file we cannot read may hold the user's own denials: nothing
      // the baseline would allow is safe to run without asking.
      if (outcome === 'allow' && d.load.error !== undefined) outcome = 'prompt'
    } catch (error) {
      grants.release(exec.callId)
      record(exec, d, 'refuse', { error: error.message })
      return { kind: 'deny', reason: `dsh-allow: could not decide this command (${error.message}); nothing ran` }
    }
    record(exec, d, outcome)
    // A record the ledger could not take: the call does not run (or, with
    // auditFailure: warn, runs and its result says so).
    const unrecorded = unrecordedRefusal(exec)
    if (unrecorded !== undefined) {
      grants.release(exec.callId)
      return { kind: 'deny', reason: outcome === 'refuse' ? `${refuseReason(d.decision)} ${unrecorded}` : unrecorded }
    }
    // A command grant's roots, and delete in the repository for git's own
    // lines: both are this call's alone, claimed by its profile; so are the
    // folders its line makes (the runner makes them, or lets the call).
    const carried = [...(d.decision.commandGrant?.rules ?? []), ...(d.decision.fenceGrants ?? [])]
    const folders = d.decision.folders ?? []
    const kept = d.decision.kept ?? []
    if (outcome === 'allow' && (carried.length > 0 || folders.length > 0 || kept.length > 0) && sessionId !== undefined) return runCarrying(exec, next, carried, folders, kept)
    if (outcome !== 'prompt') grants.release(exec.callId)
    if (outcome === 'refuse') return { kind: 'deny', reason: refuseReason(d.decision) }
    if (outcome === 'allow') return next()
    const reason = promptReason(d.decision, d.load, workspaceNote?.(d.request))
    if (sessionId === undefined) return { kind: 'ask', reason }
    grants.hold(sessionId, exec.callId, command)
    asks.add({
      callId: exec.callId, sessionId, command, reason, cwd: d.request.cwd, mode: d.mode,
      workspace: d.request.workspace, home: d.request.home,
      missing: d.decision.missing ?? [], proposals: d.decision.proposals ?? [], unknown: d.decision.unknown ?? [],
      carried, folders, kept, widened: d.decision.widened ?? [],
      // What the managed policy leaves the card: Always allow, the auto-reviewer.
      alwaysAllow: d.decision.managed?.alwaysAllow !== false,
      autoReview: d.decision.managed?.autoReview !== false,
    })
    let downstream
    try {
      downstream = await next()
    } catch (error) {
      asks.drop(exec.callId)
      grants.release(exec.callId)
      throw error
    }
    if (downstream?.kind === 'deny') {
      asks.drop(exec.callId)
      grants.release(exec.callId)
      return downstream
    }
    return { kind: 'ask', reason }
  }

  /**
   * A command grant's roots are this call's one-shot grants, exactly like
   * Allow once: bound to the call id for the decision, claimed by its own
   * command line for the kernel profile, released in post-execute. The call
   * keeps its session's turn meanwhile, so no other call can claim them.
   */
  async function runCarrying(exec, next, carried, folders = [], kept = []) {
    grants.hold(exec.agent.session.id, exec.callId, exec.arguments.command)
    grants.bind(exec.callId, carried, folders, kept)
    let downstream
    try {
      downstream = await next()
    } catch (error) {
      grants.release(exec.callId)
      throw error
    }
    if (downstream?.kind === 'deny') grants.release(exec.callId)
    return downstream
  }

  async function fileGate(exec, next) {
    const args = exec.arguments ?? {}
    if (exec.name === 'str_replace_editor' && args.command === 'view') return next()
    const target = typeof args.file_path === 'string' ? args.file_path : args.path
    if (typeof target !== 'string' || target.length === 0) return next()
    const session = exec.agent?.session
    const base = session?.header?.cwd ?? policyOf(session).workspaceRoot
    const path = resolve(base, expandHomePath(target))
    const real = nodeHost.canonical(path)
    if (protectedFiles().some((p) => within(real, nodeHost.canonical(p)))) {
      record(exec, undefined, 'refuse', { path, tier: 'protected' })
      return {
        kind: 'deny',
        reason: `dsh-allow: refused write ${path} — the permission store, audit log and kept fences are never writable, by any tool. ` +
          'Do not try another way; the user changes rules with /allow.',
      }
    }
    // What the managed policy denies no tool writes, whoever asks.
    const denied = managedDenial?.(path) ?? (real === path ? undefined : managedDenial?.(real))
    if (denied !== undefined) {
      record(exec, undefined, 'refuse', { path, tier: 'managed', managed: true, reason: denied })
      return {
        kind: 'deny',
        reason: `dsh-allow: refused write ${path} — ${denied}. This is the permission policy, not an error: do not try another way; tell the user.`,
      }
    }
    return next()
  }

  /**
   * The monotonic floor after every pre-execute listener: re-decide with the
   * call's own one-shot grant (and only its own); a refusal here stands even
   * if a listener ahead of ours allowed the call without asking us.
   */
  function guard(exec) {
    if (!SHELL_TOOLS.has(exec.name) || !supported || typeof exec.arguments?.command !== 'string') return undefined
    // An answer or a review the ledger could not take counts as much as the decision.
    const unrecorded = unrecordedRefusal(exec)
    if (unrecorded !== undefined) return unrecorded
    try {
      const d = decide(exec, grants.forCall(exec.callId))
      ranUnder.set(exec.callId, d)
      return d.decision.decision === 'refuse' ? refuseReason(d.decision) : undefined
    } catch (error) {
      return `dsh-allow: could not decide this command (${error.message}); nothing ran`
    }
  }

  function settle(exec) {
    decide.toolCallEnded?.()
    asks.drop(exec.callId)
    grants.release(exec.callId)
    ranUnder.delete(exec.callId)
    ledger.forget?.(exec.callId)
    toldUnrecorded.delete(exec.callId)
  }

  /**
   * A call the gate let through whose body failed before anything ran (the
   * host refused to run it unconfined when the sandbox runner failed, the
   * floor refused it, the profile could not be handed over): its row says
   * so, instead of reading as run. A command that ran has a value, whatever
   * its exit; a cancelled one may have run part of the way, and is left be.
   */
  function recordNotRun(exec, result) {
    if (!SHELL_TOOLS.has(exec.name) || !result.isError || result.value !== undefined || !ranUnder.has(exec.callId)) return false
    if (exec.signal?.aborted) return false
    const text = result.error?.message ?? (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ')
    ledger.append({
      kind: 'not-run', time: new Date().toISOString(), sessionId: exec.agent?.session?.id, callId: exec.callId,
      why: String(text).replace(/\s+/g, ' ').trim().slice(0, 500) || 'the tool failed before the command ran',
    })
    return true
  }

  async function postExecute(exec, result, next) {
    // Any tool may have moved files: the host forgets the folders it
    // resolved, so the next decision looks at the disk as it is now.
    invalidate?.()
    const notes = []
    let denials = []
    let refused = []
    if (SHELL_TOOLS.has(exec.name) && !result.isError) {
      const fenced = (fence.current()?.level ?? 'off') !== 'off'
      const ran = ranUnder.get(exec.callId)
      // A kernel denial becomes guidance: the missing capability, where, and
      // the narrowest /allow add, instead of a bare "Permission denied".
      if (fenced && ran !== undefined && explainDenials !== undefined) {
        const stderr = result.value?.stderr?.text ?? ''
        try {
          denials = explainDenials(stderr, ran.request.cwd, ran.request.home)
        } catch {
          // Guidance is a courtesy; the call's result stands without it.
        }
        // The ledger says what the kernel did, not only what was decided:
        // the runner's own refusals as it named them (capability, system
        // call, program), the rest as the program's message and the call's
        // fence tell.
        if (denials.length > 0) {
          refused = denials.map(({ path, capability, door, operation, program }) => door !== undefined ? { path, door }
            : operation !== undefined ? { path, capability, operation, program }
              : named(ran.request, path, capability, readOnlyAt(stderr, path)))
          ledger.append({ kind: 'kernel', time: new Date().toISOString(), sessionId: exec.agent?.session?.id, callId: exec.callId, denied: refused })
        }
      }
    }
    // Processes the call left running (a server in the background) stay
    // fenced under the runner's detached supervisor: the ledger says which.
    if (SHELL_TOOLS.has(exec.name) && ranUnder.has(exec.callId)) {
      const pids = leftRunning(result.value?.stderr?.text ?? '')
      if (pids.length > 0) ledger.append({ kind: 'background', time: new Date().toISOString(), sessionId: exec.agent?.session?.id, callId: exec.callId, pids })
    }
    const notRun = recordNotRun(exec, result)
    const lost = ledger.lostFor?.(exec.callId)
    if (lost !== undefined && !toldUnrecorded.has(exec.callId)) {
      notes.push(lostRecordText(lost, ranUnder.has(exec.callId) && !notRun ? 'ran' : 'unrecorded'))
    }
    settle(exec)
    const downstream = await next()
    if (downstream?.kind !== 'accept' || Object.hasOwn(downstream, 'value')) return downstream
    const content = downstream.content ?? result.content ?? []
    // The kernel refused part of the call: the model is told which (path,
    // capability) and what would grant it, and the call is an error (the
    // host's own result would say it succeeded, or point at a wider sandbox
    // mode, which is not the remedy).
    if (denials.length > 0) {
      const guidance = denials.map((d, i) => d.capability === undefined && refused[i]?.capability !== undefined ? guidanceFor(refused[i]) : d.guidance)
      // Refusals the runner named in a command that went on and exited 0
      // (an assembler unlinking its old output before writing it again, a
      // cache it could not write): the model is told, the result stands.
      if (result.value?.exitCode === 0 && denials.every((d) => d.operation !== undefined)) {
        const head = `dsh-allow: the kernel fence refused part of what this command tried (${refused.map(deniedWhat).join('; ')}); the command went on and exited 0, so the output above is what it did. If something it needed is missing, the lines below say what would grant it.`
        return { ...downstream, content: [...content, { type: 'text', text: ['', head, ...guidance, ...notes].join('\n') }] }
      }
      const head = `dsh-allow: the kernel fence refused part of this command (${refused.map(deniedWhat).join('; ')}), so it did not do all it was asked to; the output above is what it did.`
      const text = ['', head, ...guidance, ...notes].join('\n')
      return { kind: 'block', feedback: [...content, { type: 'text', text }], ...(downstream.additionalContexts ? { additionalContexts: downstream.additionalContexts } : {}) }
    }
    if (notes.length === 0) return downstream
    return { ...downstream, content: [...content, ...notes.map((text) => ({ type: 'text', text }))] }
  }

  return {
    preExecute,
    guard,
    postExecute,
    onResult: (exec) => settle(exec),
  }
}

/** The pids the runner says the call left running (runner/supervise.rs LEFT_RUNNING). */
export function leftRunning(stderr) {
  const line = stderr.split('\n').find((l) => l.startsWith('dsh-allow: left running: '))
  const pids = line?.match(/\(pids ([\d ]+)\)/)?.[1]
  return pids ? pids.trim().split(/\s+/).map(Number).filter((n) => Number.isInteger(n) && n > 0) : []
}

/** "delete on build/x (unlink by rm)", "connect to /run/x.sock": one refusal in a few words. */
function deniedWhat(d) {
  if (d.door !== undefined) return `${d.door === 'socket' ? 'connect to' : 'signal to'} ${shown(d.path)}`
  const what = d.capability ?? (d.withheld?.length ? d.withheld.join(' or ') : 'an operation')
  const how = d.operation !== undefined ? ` (${shown(d.operation)} by ${shown(d.program ?? 'the call')})` : ''
  return `${what} on ${shown(d.path)}${how}`
}

/**
 * The guidance for a refusal whose message named no operation but whose
 * capability the call's own fence tells (`named`): the core's sentence
 * (fence/guidance.rs) with that capability.
 */
function guidanceFor({ path, capability }) {
  const target = capability === 'delete' || capability === 'create' ? path.slice(0, path.lastIndexOf('/')) || '/' : path
  const kind = target === path ? 'file' : 'folder'
  return `dsh-allow: the kernel fence refused ${capability} on ${shown(path)} — the file-system permissions the user set for this session. ` +
    `Do not work around it with another command; if it is needed, ask the user, who can grant it with \`/allow add ${capability} ${shown(target)} ${kind}\`.`
}

/** What a read-only mount refuses. */
const CHANGES = ['write', 'create', 'delete']

/** Whether the error that named `path` was a read-only file system's. */
function readOnlyAt(stderr, path) {
  const name = path.slice(path.lastIndexOf('/') + 1)
  return stderr.split('\n').some((l) => l.includes(name) && l.toLowerCase().includes('read-only file system'))
}

/** `path` is `root` or inside it (a protected folder covers what it holds). */
function within(path, root) {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`)
}
