// The audit ledger: one NDJSON line per decision and per human answer, in the
// record shape the core folds (src/ledger.rs), appended to the configured
// `auditFile`. Every record is also published as the Cordis event
// `dsh-allow/decided`, in the gate's own shape, for observers in the process.
//
// Each line goes to the file in one write(2) on a descriptor opened with
// O_APPEND, so writers in several DSH processes never interleave inside a
// line. Commands and reasons pass through the core's `redact` first: the
// ledger outlives the session and must not become a second copy of a token.
// The file and its folder are protected paths (index.js hands `auditFile` to
// the core), so no agent call can rewrite history.

import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/** Marks our lines among whatever else might share the file (`LEDGER_VERSION`). */
export const LEDGER_VERSION = 1

const TIERS_OF_RULES = new Set(['rule', 'grant'])

/** DSH's approval outcomes, as the human actions the ledger names. */
const ACTIONS = {
  'allowed-once': 'allow-once',
  rejected: 'deny',
  cancelled: 'cancelled',
  unavailable: 'unavailable',
}

/**
 * Who decided an allowed call: a stored rule, a deployment grant or a
 * command grant is `rule`; hidden code or computed paths bounded by the
 * kernel fence are `fence`; everything else that allows without asking is
 * the platform `baseline`. Refusals and prompts are this plugin's `policy` (a
 * prompt's row turns `human` when its answer is folded in).
 */
export function sourceOf(record) {
  if (record.decision !== 'allow') return 'policy'
  if (record.commandGrant) return 'rule'
  if ((record.effects ?? []).some((e) => e.granted && TIERS_OF_RULES.has(e.tier))) return 'rule'
  // What the text could not show (inline code, computed paths) ran because
  // the kernel fence bounds it: the fence decided, not the baseline.
  if (record.fenced && (record.unknown ?? []).some((u) => u.bounded)) return 'fence'
  return 'baseline'
}

/** The rules the ledger names, as `{path, recursive, access}` (access: only what it grants). */
function ruleView(rule) {
  const access = Object.fromEntries(Object.entries(rule.access ?? {}).filter(([, v]) => v === true))
  return { path: rule.path, recursive: rule.recursive !== false, access }
}

function pairs(list) {
  return (list ?? []).map(({ path, capability }) => ({ path, capability }))
}

/**
 * One gate or approval record as the ledger line the core folds, or
 * undefined for a record without a call (nothing to fold it into).
 */
export function ledgerRecord(record, redact) {
  if (typeof record.sessionId !== 'string' || typeof record.callId !== 'string') return undefined
  const head = { dshAllow: LEDGER_VERSION, kind: undefined, sessionId: record.sessionId, callId: record.callId }
  if (record.kind === 'decision') {
    const command = record.command ?? (record.path !== undefined ? `${record.tool} ${record.path}` : '')
    const line = {
      ...head,
      kind: 'decision',
      time: record.time,
      tool: record.tool,
      command: redact(String(command)),
      cwd: record.cwd ?? '',
      mode: record.mode ?? '',
      decision: record.decision,
      source: sourceOf(record),
      reason: redact(String(record.error ?? record.reason ?? '')),
      rules: (record.rules ?? []).map(ruleView),
      missing: pairs(record.missing),
    }
    if (record.decision === 'refuse' && line.missing.length === 0) {
      line.missing = pairs((record.effects ?? []).filter((e) => e.refused))
      if (record.path !== undefined && line.missing.length === 0) line.missing = [{ path: record.path, capability: 'write' }]
    }
    if (record.commandGrant) line.commandGrant = record.commandGrant
    // Where the call stood, so a reader can show its paths as `build/` or `~/.ssh/…`.
    if (typeof record.workspace === 'string') line.workspace = record.workspace
    if (typeof record.home === 'string') line.home = record.home
    return line
  }
  if (record.kind === 'kernel') {
    const denied = (record.denied ?? []).filter((d) => typeof d.path === 'string' && d.path !== '')
    if (denied.length === 0) return undefined
    // One capability when the error or the fence names it; otherwise every
    // capability the call's fence withheld there (one of them was refused).
    const entry = ({ path, capability, withheld, door }) => (typeof door === 'string'
      ? { path, capability: null, door }
      : capability || !Array.isArray(withheld) || withheld.length === 0
        ? { path, capability: capability ?? null }
        : { path, capability: null, withheld })
    return { ...head, kind: 'kernel', time: record.time, denied: denied.map(entry) }
  }
  if (record.kind === 'human') {
    const always = record.outcome === 'allowed-once' && (record.always ?? []).length > 0
    return {
      ...head,
      kind: 'answer',
      time: record.time,
      action: always ? 'always-allow' : (ACTIONS[record.outcome] ?? 'unavailable'),
      // What was stored stays named whatever the card's outcome (a card
      // cancelled after its Always allow stored rules still stored them).
      stored: (record.always ?? []).map(ruleView),
    }
  }
  // A change outside any call: the rules file, a session's mode, the default preset.
  if (record.kind === 'rules' || record.kind === 'mode') {
    return {
      ...head,
      kind: record.kind,
      time: record.time,
      command: redact(String(record.command ?? '')),
      reason: redact(String(record.reason ?? '')),
      source: record.source ?? 'host',
      mode: record.mode ?? '',
      stored: (record.stored ?? []).map(ruleView),
    }
  }
  return undefined
}

/**
 * Append one line with a single write on an O_APPEND descriptor. The folder
 * is created private; the file is created 0600.
 */
export function appendLine(file, line) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600)
  try {
    const bytes = Buffer.from(line.endsWith('\n') ? line : `${line}\n`, 'utf8')
    const written = writeSync(fd, bytes, 0, bytes.length)
    // A short write would leave half a line: report it, the fold skips it.
    if (written !== bytes.length) throw new Error(`short write to ${file} (${written} of ${bytes.length} bytes)`)
  } finally {
    closeSync(fd)
  }
}

/**
 * The ledger of one plugin instance. `config.audit === false` turns the file
 * off (records are still published). A failed write never fails a call: it
 * is reported through `onError`.
 */
export function createLedger(config, { redact, publish, onError } = {}) {
  const file = config.audit === false ? undefined : config.auditFile
  const clean = typeof redact === 'function' ? redact : (text) => text
  return {
    file,
    append(record) {
      if (file !== undefined) {
        try {
          const line = ledgerRecord(record, clean)
          if (line !== undefined) appendLine(file, JSON.stringify(line))
        } catch (error) {
          onError?.(error)
        }
      }
      publish?.(record)
    },
  }
}
