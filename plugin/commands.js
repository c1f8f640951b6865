// `/allow`: list, status, add, remove, clear — the user's own hand on the
// stored rules. Answers go to the UI only (DSH never shows command output to
// the model) and in the user's language.

import { isAbsolute, resolve } from 'node:path'
import { expandHomePath } from '@deepseek-ai/dsh-home-paths'
import { canonical } from './fs-host.js'
import { languageOf, say } from './messages.js'

const CAPABILITIES = ['read', 'write', 'create', 'delete', 'execute']

/**
 * @param {object} deps
 * @param {import('./store.js').RulesStore} deps.store
 * @param {() => object|undefined} deps.fenceStatus
 * @param {(session) => {mode: string, workspaceRoot: string}} deps.policyOf
 * @param {() => string[]} deps.protectedFiles
 * @param {{ newRuleId: Function, version: Function }} deps.core
 * @param {{ enforce: string, runner: string }} deps.settings
 */
export function allowCommand(deps) {
  return {
    name: 'allow',
    description: 'dsh-allow: list, add or remove file-permission rules; status of the kernel fence',
    input: { hint: 'list | status | add <caps> <path> [file|folder] | remove <n> | clear' },
    handler: (inv) => runAllow(deps, inv),
  }
}

export async function runAllow(deps, inv) {
  const session = inv.agent?.session
  const lang = languageOf(session, inv.rawInput)
  const t = (key, values) => say(lang, key, values)
  const words = inv.rawInput.trim().split(/\s+/).filter(Boolean)
  const [verb = 'list', ...args] = words
  switch (verb) {
    case 'list': return success(listText(deps, t))
    case 'status': return success(statusText(deps, t, session))
    case 'add': return add(deps, t, session, args)
    case 'remove': return remove(deps, t, args)
    case 'clear': return clear(deps, t)
    default: return { kind: 'error', text: t('usage') }
  }
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
  if (load.error !== undefined) notes.push(t('rules.error', { error: load.error }))
  for (const warning of load.warnings) notes.push(t('rules.warning', { warning }))
  return notes
}

function listText({ store }, t) {
  const load = store.load()
  const lines = loadNotes(load, t)
  if (load.rules.length === 0) lines.push(t('list.empty', { file: store.file }))
  else {
    lines.push(t('list.header', { file: store.file }))
    load.rules.forEach((r, i) => lines.push(t('list.row', { n: i + 1, path: r.path, caps: caps(r.access), shape: shape(t, r) })))
  }
  return lines.join('\n')
}

function statusText({ store, fenceStatus, policyOf, core, settings }, t, session) {
  const load = store.load()
  const policy = policyOf(session)
  const fence = fenceStatus()
  const lines = [t('status.header', { version: core.version() })]
  lines.push(t('status.rules', { file: store.file, count: load.rules.length }))
  lines.push(...loadNotes(load, t))
  lines.push(t('status.defaults', { workspace: policy.workspaceRoot }))
  lines.push(t('status.mode', { mode: policy.mode }))
  if (fence === undefined) {
    lines.push(t('status.fence', { level: t('fence.pending'), enforce: settings.enforce, runner: settings.runner }))
  } else {
    lines.push(t('status.fence', { level: fence.level, enforce: settings.enforce, runner: settings.runner }))
    if (fence.reason) lines.push(t('status.fence.reason', { reason: fence.reason }))
    for (const cap of CAPABILITIES) {
      const inKernel = fence.capabilities.includes(cap)
      lines.push(t('status.cap', { cap, state: t(inKernel ? 'state.kernel' : 'state.gate'), why: fence.why?.[cap] ?? '' }))
    }
  }
  return lines.join('\n')
}

async function add({ store, policyOf, protectedFiles, core }, t, session, args) {
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
  const real = canonical(path)
  if (protectedFiles().some((p) => canonical(p) === real)) return { kind: 'error', text: t('add.protected', { path }) }
  const rule = { id: core.newRuleId(), path, recursive: kindText === 'folder', access, hits: 0, createdAt: new Date().toISOString() }
  try {
    const after = await store.update(({ rules, commands }) => ({ rules: [...rules, rule], commands }))
    return success(t('add.done', { n: after.rules.length, path, caps: caps(access), shape: shape(t, rule) }))
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
  return success(t('remove.done', { n, path: removed.path, caps: caps(removed.access) }))
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
