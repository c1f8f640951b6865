// dsh-allow: a file-system permission layer for DSH shell calls.
//
// A host row (profile cordis.patch.yml), so its listeners see every agent's
// calls. This module only wires: the gate (gate.js) asks the core before a
// call runs, confine.js hands the same rules to the kernel, approval.js
// turns answers into one-shot grants (grants.js) or stored rules
// (store.js), commands.js is `/allow`, ledger.js writes the audit ledger and
// web.js serves the Approvals tab and the card on the web host. Every
// registration is made inside ctx.effect, so disposing the plugin undoes
// all of it.

import { randomBytes } from 'node:crypto'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { resolveDshHome } from '@deepseek-ai/dsh-home-paths'
import { BlockAssembler, createUserMessage } from '@deepseek-ai/dsh-llm'
import * as core from './core.js'
import { Config, resolveConfig } from './config.js'
import { RulesStore } from './store.js'
import { GrantStore } from './grants.js'
import { Fence, SANDBOX_EXEC, defaultRunner, persistenceOf } from './fence.js'
import { makeDecider, makeGate } from './gate.js'
import { socketsOf } from './sockets.js'
import { makePlanner, wrapConfine } from './confine.js'
import { Asks, approvalListener, withProposals } from './approval.js'
import { allowCommand } from './commands.js'
import { createLedger } from './ledger.js'
import { LedgerTail } from './tail.js'
import { webRoutes, withToken } from './web.js'
import { makeReviewer } from './review.js'
import { Hosts } from './hosts.js'
import { Modes, watchModes } from './modes.js'
import { changeRecord } from './changes.js'
import { fenceRules, ProfileFiles } from './profiles.js'
import { sessionNotices, workspaceProblem } from './notices.js'
import { fromProjectEnv } from './launch.js'
import { ManagedFiles, writeDenial } from './managed.js'

export const name = 'dsh-allow'
// Only the tool registry is required: the gate must mount even where the
// sandbox, approval or command services are missing (they are optional below).
export const inject = ['tools']
export { Config }

const PLATFORMS = { linux: 'linux', darwin: 'macos' }

export function apply(ctx, rawConfig) {
  const config = resolveConfig(rawConfig)
  // testPlatform (a test hook) takes the macOS path on Linux, under the Seatbelt model.
  const platform = config.testPlatform ?? PLATFORMS[process.platform]
  const harnessHome = resolveDshHome()
  // macOS runs the core's Seatbelt profile under /usr/bin/sandbox-exec, nothing
  // else; a test's stand-in only with testPlatform (resolveConfig checks).
  const sandboxExec = config.sandboxExec ?? SANDBOX_EXEC
  const runner = platform === 'macos' ? sandboxExec : config.runner ?? defaultRunner()
  const settings = { platform, home: homedir(), harnessHome, grants: config.grants, enforce: config.enforce, runner, sockets: () => socketsOf(process.env) }

  const store = new RulesStore(config.rulesFile, core)
  // The administrator's managed policy: the platform's system file and the
  // config's further files, read afresh when they change (managed.js).
  const managed = new ManagedFiles({ system: platform === undefined ? undefined : core.managedSystemFile(platform), extra: config.managedFiles ?? [], core })
  const grants = new GrantStore({ ttlMs: config.sessionGrantTtlMs })
  const asks = new Asks()
  const ledger = createLedger(config, {
    // audit: "required" keeps the ledger on, and every lost record stops its call.
    required: () => managed.load().policy?.audit === 'required',
    redact: core.redact,
    publish: (record) => ctx.emit('dsh-allow/decided', record),
    onError: (error) => ctx.logger?.warn?.(`dsh-allow: the audit ledger ${config.auditFile} could not be written: ${error.message}`),
  })
  const fence = new Fence({
    platform, runner, enforce: config.enforce, scratchParent: harnessHome,
    seatbelt: { compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec },
  })
  // The runner's kept fences are applied without recompiling, and it reads
  // each call's profile from a file: nothing a fenced command may write can
  // reach either, so both folders are protected too. So is the registry of
  // the DSH processes whose listeners no fenced call may reach (hosts.js).
  const profiles = new ProfileFiles(join(harnessHome, 'dsh-allow-profiles'))
  const hosts = new Hosts(join(harnessHome, 'dsh-allow-hosts'))
  ctx.effect(() => hosts.register(), 'dsh-allow: host registry')
  const protectedFiles = () => [...store.files(), config.auditFile, profiles.dir, hosts.dir, ...(config.fenceCache === undefined ? [] : [config.fenceCache]), ...managed.files()]
  const workspaceNote = (request) => workspaceProblem(core, request.workspace, request.home)
  const policyOf = (session) => {
    const policy = ctx.get('sandboxPolicy')
    if (policy !== undefined) return policy.resolve(session === undefined ? {} : { session })
    // No sandbox policy composed: nothing confines, so decide as full access.
    return { mode: 'danger-full-access', workspaceRoot: core.nodeHost.canonical(session?.header?.cwd ?? process.cwd()) }
  }

  const decide = makeDecider({ core, host: core.nodeHost, store, fence, settings, policyOf, protectedFiles, managed })
  // What the call's own fence did not grant on a path the kernel refused
  // (the fence compiled again from the request the call ran under).
  const withheld = (request, path) => {
    const status = fence.current()
    const profile = {
      workspace: request.workspace, home: request.home, harnessHome: request.harnessHome, platform: request.platform,
      mode: request.mode, rules: request.rules, grants: request.grants, protectedFiles: request.protectedFiles,
      enforce: status?.level ?? 'off', persistence: persistenceOf(status),
      ...(request.managed === undefined ? {} : { managed: request.managed }),
    }
    return core.withheldAt(core.compileProfile(profile, core.nodeHost).plan, core.nodeHost.canonical(path))
  }
  const gate = makeGate({ decide, decideRequest: (request) => core.decide(request, core.nodeHost), grants, asks, ledger, fence, policyOf, protectedFiles, platform, supported: platform !== undefined, explainDenials: core.explainDenials, withheld, invalidate: core.invalidate, workspaceNote, managedDenial: (path) => writeDenial(managed.load().policy, path, settings.home) })
  if (platform === undefined) ctx.logger?.warn?.(`dsh-allow: ${process.platform} is not supported; shell calls pass through`)
  fence.start()

  // Every change to the rules file, whoever made it, is a ledger record (changes.js).
  let changes = 0
  store.onChange = (change) => {
    const record = changeRecord({ ...change, seq: changes++ })
    if (record !== undefined) record.home = settings.home
    if (record !== undefined) ledger.append(record)
  }
  // A session switched to danger-full-access, or the default preset changed:
  // recorded, and shown by /allow status (modes.js).
  const modes = new Modes()
  const watch = watchModes({ modes, ledger, managed: () => managed.load().policy })
  ctx.effect(() => ctx.on('session/event', watch.onSessionEvent), 'dsh-allow: mode changes')
  ctx.effect(() => ctx.on('settings/updated', watch.onSettings), 'dsh-allow: default preset')
  ctx.effect(() => ctx.on('tools/pre-execute', gate.preExecute, { prepend: true }), 'dsh-allow: gate')
  ctx.effect(() => ctx.tools.guard(gate.guard), 'dsh-allow: protected floor')
  ctx.effect(() => ctx.on('tools/post-execute', gate.postExecute), 'dsh-allow: release one-shot grants')
  ctx.effect(() => ctx.on('tools/result', gate.onResult), 'dsh-allow: settle calls')
  ctx.effect(() => ctx.on('agent/session-start', sessionNotices({
    core, policyOf, home: settings.home, createUserMessage, log: (line) => ctx.logger?.warn?.(line),
  })), 'dsh-allow: session notices')
  // Optional: the session's own model may answer "allow once" before the card (review.js).
  // A managed autoReview: false silences it whatever the config says (the
  // card's own `autoReview` carries that, per call, to the listener).
  const review = config.autoReview?.enabled !== true ? undefined : makeReviewer({
    autoReview: config.autoReview, core, llm: () => ctx.get('llm'), kit: { BlockAssembler, createUserMessage },
    workspaceOf: (session) => policyOf(session).workspaceRoot, ledger,
    log: (line) => ctx.logger?.info?.(line),
    onError: (error) => ctx.logger?.warn?.(`dsh-allow: auto-review: ${error.message}`),
  })
  ctx.effect(() => ctx.on('approval/request', approvalListener({ asks, grants, ledger, review }), { prepend: true }), 'dsh-allow: approvals')
  ctx.effect(() => () => grants.clear(), 'dsh-allow: release waiters')

  // Variables naming code that the host took from the workspace's `.env`
  // at start: removed from every fenced call (launch.js).
  const unset = core.codeVariables(fromProjectEnv(ctx.get('launchEnvironment')))
  ctx.inject(['sandbox'], (sub) => {
    const planner = makePlanner({
      platform, fence, runner, fenceCache: config.fenceCache, profiles, compileProfile: core.compileProfile, host: core.nodeHost, sandboxExec, unset,
      // The runner's profile request (src/profile ProfileRequest).
      profileFor: (policy, command, enforce) => {
        const once = command !== undefined && policy.sessionId !== undefined ? grants.claimCall(policy.sessionId, command) : { rules: [], folders: [], kept: [] }
        // A rules file at fault: the gate asks for every call, and the fence
        // keeps the rules last read whole (its denials included).
        const load = store.load()
        const managedPolicy = managed.load().policy
        return {
          workspace: policy.workspaceRoot, home: settings.home, harnessHome, platform, mode: policy.mode,
          // Deployment grants stand like stored rules (gate.js): only the call's
          // own grants answer a managed ask. (The store's frozen array, when
          // there are none, lets profiles.js know the rules by identity.)
          // Each rule goes as the fence reads it (profiles.js).
          rules: fenceRules(withDeployment(load.error === undefined ? load.rules : (load.lastGood?.rules ?? []), config.grants)), grants: once.rules, protectedFiles: protectedFiles(), enforce,
          // The managed policy: its denials compiled in, and a profile it refuses runs nothing.
          ...(managedPolicy === undefined ? {} : { managed: managedPolicy }),
          // Folders the line makes (the decision's): made before the fence, or by the runner's supervisor.
          folders: once.folders,
          // Files whose content the runner keeps before the call replaces them (git restore).
          kept: once.kept,
          // The runner shuts hooks and git config unless the probe found it cannot.
          persistence: persistenceOf(fence.current()),
          hostPids: hosts.pids(),
          // Seatbelt names ports, not processes: this process's web server.
          hostPorts: Number.isInteger(ctx.get('webServer')?.port) ? [ctx.get('webServer').port] : [],
        }
      },
    })
    sub.effect(() => wrapConfine(sub.sandbox, planner), 'dsh-allow: confine')
  })

  ctx.inject(['commands'], (sub) => {
    sub.effect(() => sub.commands.register(allowCommand({
      store, core, settings, policyOf, protectedFiles, fenceStatus: () => fence.current(), fenceReady: () => fence.ready(), managed,
      ledger, workspaceNote: (session) => workspaceProblem(core, policyOf(session).workspaceRoot, settings.home), modes,
    })), 'dsh-allow: /allow')
  })

  // The model is told which programs hold command grants and which spellings
  // match, from the rules file as it is at each assembly. Only a hint: the
  // core's matcher decides, a wrong spelling just asks.
  if (config.promptHint !== false) {
    ctx.inject(['systemPrompt'], (sub) => {
      sub.effect(() => sub.systemPrompt.section({
        name: 'tool:bash:command-grants',
        order: 106,
        text: () => {
          try {
            return promptText(core.commandGrantPrompt(store.load().commands))
          } catch (error) {
            // A hint must never fail the model's turn.
            ctx.logger?.warn?.(`dsh-allow: command grants prompt section: ${error.message}`)
            return ''
          }
        },
      }), 'dsh-allow: command grants prompt section')
    })
  }

  // For answerers (the web card, tests): what a pending prompt names, and
  // "Always allow" = store exactly those proposals, then answer allowed-once.
  const api = {
    version: () => core.version(),
    status: () => ({ fence: fence.current(), rulesFile: store.file, rules: store.load(), managed: managed.load() }),
    pending: (callId) => snapshot(asks.get(callId)),
    // The Approvals page rendered this card (web.js, with the page's token).
    shown: (callId) => {
      const ask = asks.get(callId)
      if (ask !== undefined) ask.shownAt ??= new Date().toISOString()
    },
    pendingAll: (sessionId) => asks.list(sessionId).map(snapshot),
    alwaysAllow: async (callId) => {
      const ask = asks.get(callId)
      if (ask === undefined) throw new Error(`dsh-allow: no pending prompt for call ${callId}`)
      // The managed policy turned Always allow off for this card (or for all).
      const policy = managed.load().policy
      if (ask.alwaysAllow === false || policy?.alwaysAllow === false || (policy?.errors?.length ?? 0) > 0) {
        throw Object.assign(new Error('the managed policy turns Always allow off for this card: answer Deny or Allow once'), { status: 403 })
      }
      let stored = []
      // A proposal naming a program (git rewriting the worktree) is stored as
      // a command grant for that program, never as a rule on the folder.
      const forPaths = ask.proposals.filter((p) => !p.command)
      const forPrograms = ask.proposals.filter((p) => p.command)
      await store.update(({ rules, commands }) => {
        const merged = withProposals(rules, forPaths, core.newRuleId, new Date().toISOString())
        // The store's rules are frozen: a grant gaining capabilities is a copy.
        const grants = (commands ?? []).map((g) => ({ ...g, ...(g.access ? { access: { ...g.access } } : {}) }))
        for (const p of forPrograms) {
          const access = Object.fromEntries(Object.entries(p.access ?? {}).filter(([, v]) => v === true))
          const same = grants.find((g) => g.command === p.command && g.roots.length === 1 && g.roots[0] === p.path)
          if (same) Object.assign((same.access ??= {}), access)
          else grants.push({ id: core.newRuleId(), name: `${p.command} in ${p.path}`, command: p.command, roots: [p.path], shape: 'strict', access, allowCdPrefix: true })
        }
        stored = [...merged.stored, ...forPrograms]
        return stored.length === 0 ? undefined : { rules: merged.rules, commands: grants }
      }, { source: 'card', sessionId: ask.sessionId, command: `Always allow: ${ask.command}` })
      ask.always = stored
      return stored
    },
  }
  ctx.effect(() => ctx.provide('dshAllow', api), 'dsh-allow: service')

  // The web host (web profile only): the Approvals tab's ledger tail, the
  // card's pending prompt and Always allow, and the core's web build.
  const tail = config.audit === false && managed.load().policy?.audit !== 'required' ? undefined : new LedgerTail(config.auditFile, core)
  ctx.inject(['webServer'], (sub) => {
    const onError = (error) => sub.logger?.warn?.(`dsh-allow: web route: ${error.message}`)
    // The Approvals page's token (web.js): in index.html, for the page alone.
    const token = randomBytes(32).toString('hex')
    sub.effect(() => sub.webServer.tapIndex((html) => withToken(html, token)), 'dsh-allow: page token')
    for (const route of webRoutes({ tail, api, token, onError })) {
      sub.effect(() => sub.webServer.register(route), `dsh-allow: ${route.path}`)
    }
  })
}

/**
 * DSH interpolates `{{name}}` in section text strictly and fails the turn on
 * an unknown one; a grant's name or path is data, so braces are split apart.
 */
function promptText(text) {
  return text.replace(/\{(?=\{)/g, '{ ').replace(/\}(?=\})/g, '} ')
}

/** The stored rules with the deployment grants after them (the same array when there are none). */
function withDeployment(rules, deployment) {
  return deployment.length === 0 ? rules : [...rules, ...deployment]
}

function snapshot(ask) {
  if (ask === undefined) return undefined
  const { callId, sessionId, command, reason, cwd, workspace, home, mode, missing, proposals, unknown, state, shownAt, alwaysAllow } = ask
  return structuredClone({ callId, sessionId, command, reason, cwd, workspace, home, mode, missing, proposals, unknown, state, shownAt, alwaysAllow: alwaysAllow !== false })
}

