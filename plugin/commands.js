// `/allow`: list, status, add, remove, clear — the user's own hand on the
// stored rules. Answers go to the UI only (DSH never shows command output to
// the model) and in the user's language.

import { existsSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { expandHomePath } from '@deepseek-ai/dsh-home-paths'
import { nodeHost } from './core.js'
import { languageOf, say } from './messages.js'
import { shown } from './text.js'

const CAPABILITIES = ['read', 'write', 'create', 'delete', 'execute']

/**
 * @param {object} deps
 * @param {import('./store.js').RulesStore} deps.store
 * @param {() => object|undefined} deps.fenceStatus
 * @param {() => Promise<object>} [deps.fenceReady] settles when the fence is probed
 * @param {(session) => {mode: string, workspaceRoot: string}} deps.policyOf
 * @param {() => string[]} deps.protectedFiles
 * @param {{ newRuleId: Function, version: Function }} deps.core
 * @param {{ enforce: string, runner: string }} deps.settings
 */
export function allowCommand(deps) {
  return {
    name: 'allow',
    description: 'dsh-allow: list, add or remove file-permission rules; status of the kernel fence',
    input: { hint: 'list | status | add <caps> <path> [file|folder] | remove <n> | clear | command list|add|remove' },
    handler: (inv) => runAllow(deps, inv),
  }
}

export async function runAllow(deps, inv) {
  const session = inv.agent?.session
  // Every write this invocation makes is the ledger's `/allow` change.
  const by = { source: 'command', sessionId: session?.id, command: `/allow ${inv.rawInput.trim()}` }
  deps = { ...deps, store: changedBy(deps.store, by) }
  const lang = languageOf(session, inv.rawInput)
  const t = (key, values) => say(lang, key, values)
  const words = inv.rawInput.trim().split(/\s+/).filter(Boolean)
  const [verb = 'list', ...args] = words
  switch (verb) {
    case 'list': return success(listText(deps, t))
    // The gate waits for the probe before any shell call; so does the status,
    // which would otherwise say "still probing" right after start-up.
    case 'status': await deps.fenceReady?.(); return success(statusText(deps, t, session))
    case 'add': return add(deps, t, session, args)
    case 'remove': return remove(deps, t, args)
    case 'clear': return clear(deps, t)
    // Quotes let a root hold spaces (~/Library/Application Support/…).
    case 'command': return commandGrants(deps, t, quotedWords(inv.rawInput).slice(1))
    default: return { kind: 'error', text: t('usage') }
  }
}

/** The store, its writes labelled `by` for the ledger. */
function changedBy(store, by) {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'update') return (change) => target.update(change, by)
      const v = target[key]
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
}

function success(text) {
  return { kind: 'success', text }
}

function shape(t, rule) {
  return t(rule.recursive ? 'shape.folder' : 'shape.file')
}

function caps(access) {
  return CAPABILITIES.filter((c) => access?.[c] === true).join(',') +
    CAPABILITIES.filter((c) => access?.[c] === false).map((c) => ` -${c}`).join('')
}

function loadNotes(load, t) {
  const notes = []
  if (load.error !== undefined) notes.push(t('rules.error', { error: load.error, file: load.file }))
  for (const warning of load.warnings) notes.push(t('rules.warning', { warning }))
  return notes
}

function listText({ store }, t) {
  const load = store.load()
  const lines = loadNotes(load, t)
  if (load.rules.length === 0) lines.push(t('list.empty', { file: store.file }))
  else {
    lines.push(t('list.header', { file: store.file }))
    load.rules.forEach((r, i) => lines.push(t('list.row', { n: i + 1, path: shown(r.path), caps: caps(r.access), shape: shape(t, r) })))
  }
  if (load.commands.length > 0) {
    lines.push(t('command.header', { file: store.file }))
    load.commands.forEach((g, i) => lines.push(commandRow(t, g, i + 1)))
  }
  return lines.join('\n')
}

function statusText({ store, fenceStatus, policyOf, core, settings, ledger, workspaceNote, modes, managed }, t, session) {
  const load = store.load()
  const policy = policyOf(session)
  const fence = fenceStatus()
  const lines = [t('status.header', { version: core.version() })]
  lines.push(...managedNotes(managed?.load(), core, t, policy.mode))
  lines.push(t('status.rules', { file: store.file, count: load.rules.length }))
  lines.push(...loadNotes(load, t))
  lines.push(...ledgerNotes(ledger, t))
  const noWorkspace = workspaceNote?.(session)
  lines.push(noWorkspace === undefined ? t('status.defaults', { workspace: policy.workspaceRoot }) : t('status.noWorkspace', { why: noWorkspace }))
  lines.push(t('status.mode', { mode: policy.mode }))
  // Sessions DSH runs unconfined, and a default preset that makes every new one so.
  for (const u of modes?.unfenced() ?? []) lines.push(t('status.unfenced', { session: u.sessionId, since: u.since }))
  if (modes?.defaultPreset === 'danger-full-access') lines.push(t('status.defaultPreset', { preset: modes.defaultPreset }))
  if (fence === undefined) {
    lines.push(t('status.fence', { level: t('fence.pending'), enforce: settings.enforce, runner: settings.runner }))
  } else {
    lines.push(t('status.fence', { level: fence.level, enforce: settings.enforce, runner: settings.runner }))
    if (fence.reason) lines.push(t('status.fence.reason', { reason: fence.reason }))
    const persistence = fence.persistence ?? { state: 'open', why: 'not probed' }
    lines.push(t(persistence.state === 'shut' ? 'status.persistence.shut' : 'status.persistence.open', { why: persistence.why }))
    const metadata = fence.metadata ?? { state: 'open', why: 'not probed' }
    lines.push(t(metadata.state === 'fenced' ? 'status.metadata.fenced' : 'status.metadata.open', { why: metadata.why }))
    if (fence.processes) lines.push(t(fence.processes.state === 'hidden' ? 'status.processes.hidden' : 'status.processes.visible', { why: fence.processes.why }))
    const doors = fence.doors ?? { state: 'open', why: 'not probed' }
    lines.push(t(doors.state === 'shut' ? 'status.doors.shut' : 'status.doors.open', { why: doors.why }))
    for (const cap of CAPABILITIES) {
      const inKernel = fence.capabilities.includes(cap)
      lines.push(t('status.cap', { cap, state: t(inKernel ? 'state.kernel' : 'state.gate'), why: fence.why?.[cap] ?? '' }))
    }
  }
  return lines.join('\n')
}

/**
 * The managed policy's files and what they enforce (the core's words), and
 * a session under a mode it does not list.
 */
function managedNotes(load, core, t, mode) {
  if (load === undefined) return []
  const lines = load.files.map((f) => t(`status.managed.${f.state}`, { file: f.file, error: f.error ?? '' }))
  const policy = load.policy
  if (policy === undefined) return lines
  for (const line of core.describeManaged(policy).filter((l) => !l.startsWith('FAULT: '))) lines.push(t('status.managed.line', { line }))
  if (Array.isArray(policy.modes) && !policy.modes.includes(mode)) lines.push(t('status.managed.mode', { mode, modes: policy.modes.join(', ') }))
  return lines
}

/** The audit ledger's health: every record this process could not write is told here. */
function ledgerNotes(ledger, t) {
  if (ledger === undefined) return []
  if (ledger.file === undefined) return [t('status.ledger.off')]
  const health = ledger.health?.() ?? { lost: 0 }
  if (health.lost === 0) return [t('status.ledger.ok', { file: ledger.file })]
  return [
    t('status.ledger.lost', { file: ledger.file, count: health.lost, time: health.last.time, error: `${health.last.code}: ${health.last.error}` }),
    t(ledger.failure === 'warn' ? 'status.ledger.warn' : 'status.ledger.refuse'),
    t(health.lastOk ? 'status.ledger.nowOk' : 'status.ledger.nowFailing'),
  ]
}

async function add({ store, policyOf, protectedFiles, core, managed, settings }, t, session, args) {
  if (args.length < 2 || args.length > 3) return { kind: 'error', text: t('add.usage') }
  const [capText, pathText, kindText = 'folder'] = args
  if (kindText !== 'file' && kindText !== 'folder') return { kind: 'error', text: t('add.usage') }
  const access = {}
  for (const cap of capText.split(',').filter(Boolean)) {
    if (!CAPABILITIES.includes(cap)) return { kind: 'error', text: t('add.badcap', { cap }) }
    access[cap] = true
  }
  if (Object.keys(access).length === 0) return { kind: 'error', text: t('add.usage') }
  const expanded = expandHomePath(pathText)
  const path = isAbsolute(expanded) ? resolve(expanded) : resolve(policyOf(session).workspaceRoot, expanded)
  const real = nodeHost.canonical(path)
  if (protectedFiles().some((p) => within(real, nodeHost.canonical(p)))) return { kind: 'error', text: t('add.protected', { path: shown(path) }) }
  const rule = { id: core.newRuleId(), path, recursive: kindText === 'folder', access, hits: 0, createdAt: new Date().toISOString() }
  // The managed policy's word on it: refused inside what it denies or asks
  // about (or with Always allow off), told what stays denied inside it.
  const policy = managed?.load().policy
  const check = policy === undefined ? { notes: [] } : core.managedRuleCheck(policy, rule, settings.home, settings.platform)
  if (check.refused) return { kind: 'error', text: t('add.managed', { why: shown(check.refused) }) }
  try {
    const after = await store.update(({ rules, commands }) => ({ rules: [...rules, rule], commands }))
    const notes = check.notes.map((note) => t('add.managedNote', { note: shown(note) }))
    return success([t('add.done', { n: after.rules.length, path: shown(path), caps: caps(access), shape: shape(t, rule) }), ...notes].join('\n'))
  } catch (error) {
    return { kind: 'error', text: t('write.failed', { error: error.message }) }
  }
}

async function remove({ store }, t, args) {
  const n = Number(args[0])
  if (args.length !== 1 || !Number.isInteger(n) || n < 1) return { kind: 'error', text: t('remove.usage') }
  let removed
  try {
    await store.update(({ rules, commands }) => {
      if (n > rules.length) return undefined
      removed = rules[n - 1]
      return { rules: rules.filter((_, i) => i !== n - 1), commands }
    })
  } catch (error) {
    return { kind: 'error', text: t('write.failed', { error: error.message }) }
  }
  if (removed === undefined) return { kind: 'error', text: t('remove.missing', { n }) }
  return success(t('remove.done', { n, path: shown(removed.path), caps: caps(removed.access) }))
}

async function clear({ store }, t) {
  let count = 0
  try {
    await store.update(({ rules, commands }) => {
      count = rules.length
      return { rules: [], commands }
    })
  } catch (error) {
    return { kind: 'error', text: t('write.failed', { error: error.message }) }
  }
  return success(t('clear.done', { count }))
}

// `/allow command …`: command grants, "this program may write these roots".
// What a grant may say is the core's to judge: the new grant is rendered and
// read back by the core, and its error names the field.

const SHAPES = ['strict', 'any']

/** Words split on blanks, where "…" or '…' keeps blanks inside one word. */
export function quotedWords(text) {
  return [...text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3])
}

function commandGrants(deps, t, args) {
  const [verb = 'list', ...rest] = args
  switch (verb) {
    case 'list': return success(commandListText(deps, t))
    case 'add': return addCommand(deps, t, rest)
    case 'remove': return removeCommand(deps, t, rest)
    default: return { kind: 'error', text: t('command.usage') }
  }
}

function commandRow(t, g, n) {
  return t('command.row', { n, name: shown(g.name), command: shown(g.command), roots: shown(g.roots.join(', ')), shape: g.shape })
}

function commandListText({ store }, t) {
  const load = store.load()
  const lines = loadNotes(load, t)
  if (load.commands.length === 0) lines.push(t('command.empty', { file: store.file }))
  else {
    lines.push(t('command.header', { file: store.file }))
    load.commands.forEach((g, i) => lines.push(commandRow(t, g, i + 1)))
  }
  return lines.join('\n')
}

/** `<program> [roots…] [--shape strict|any]` as a grant, or the usage error. */
function parseCommandArgs(args, t) {
  const words = []
  let shape = 'strict'
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i]
    if (word === '--shape' || word.startsWith('--shape=')) {
      shape = word === '--shape' ? args[++i] : word.slice('--shape='.length)
      if (!SHAPES.includes(shape)) return { error: t('command.badfield', { field: 'shape', why: '"strict" or "any"' }) }
    } else if (word.startsWith('--')) {
      return { error: t('command.usage') }
    } else {
      words.push(word)
    }
  }
  const [command, ...roots] = words
  if (command === undefined) return { error: t('command.usage') }
  return { grant: { name: command, command, roots: roots.length > 0 ? roots : ['$HOME'], shape } }
}

/** The core's verdict on one grant: its error or warning, with the field named. */
function judge(core, grant) {
  let load
  try {
    load = core.parseRules(core.renderRules([], [grant]))
  } catch (error) {
    return error.message
  }
  const local = (text) => text.replace(/^commands\[0\]\.?:?\s*/, '')
  if (load.error) return local(load.error)
  if (load.warnings.length > 0 || load.commands.length !== 1) return local(load.warnings[0] ?? 'not accepted')
  return undefined
}

function rootPath(root, home) {
  if (root === '$HOME' || root.startsWith('$HOME/')) return join(home, root.slice('$HOME'.length))
  return expandHomePath(root)
}

async function addCommand({ store, core, settings, managed }, t, args) {
  // A command grant is a stored answer too: none with Always allow off.
  const policy = managed?.load().policy
  if (policy !== undefined && (policy.alwaysAllow === false || (policy.errors?.length ?? 0) > 0)) {
    return { kind: 'error', text: t('command.managed', { why: `the managed policy (${policy.files.join(', ')}) turns Always allow off: no grant is stored` }) }
  }
  const parsed = parseCommandArgs(args, t)
  if (parsed.error !== undefined) return { kind: 'error', text: parsed.error }
  const grant = { id: core.newRuleId(), ...parsed.grant, allowCdPrefix: true }
  const why = judge(core, grant)
  if (why !== undefined) return { kind: 'error', text: t('command.invalid', { why }) }
  let duplicate
  let after
  try {
    after = await store.update(({ rules, commands }) => {
      duplicate = commands.findIndex((g) => g.command === grant.command)
      if (duplicate >= 0) return undefined
      return { rules, commands: [...commands, grant] }
    })
  } catch (error) {
    return { kind: 'error', text: t('write.failed', { error: error.message }) }
  }
  if (duplicate >= 0) return { kind: 'error', text: t('command.duplicate', { command: grant.command, n: duplicate + 1 }) }
  const lines = [t('command.added', { row: commandRow(t, grant, after.commands.length) })]
  // Landlock fences only paths that exist: a missing root cannot be carried,
  // and the call asks until the folder is there.
  for (const root of grant.roots) {
    if (!existsSync(rootPath(root, settings.home))) lines.push(t('command.missingroot', { root }))
  }
  return success(lines.join('\n'))
}

async function removeCommand({ store }, t, args) {
  const n = Number(args[0])
  if (args.length !== 1 || !Number.isInteger(n) || n < 1) return { kind: 'error', text: t('command.usage') }
  let removed
  try {
    await store.update(({ rules, commands }) => {
      if (n > commands.length) return undefined
      removed = commands[n - 1]
      return { rules, commands: commands.filter((_, i) => i !== n - 1) }
    })
  } catch (error) {
    return { kind: 'error', text: t('write.failed', { error: error.message }) }
  }
  if (removed === undefined) return { kind: 'error', text: t('command.nosuch', { n }) }
  return success(t('command.removed', { row: commandRow(t, removed, n) }))
}

/** `path` is `root` or inside it (a protected folder covers what it holds). */
function within(path, root) {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`)
}
