// The audit ledger: one NDJSON line per decision and per human answer, in the
// record shape the core folds (src/ledger.rs), appended to the configured
// `auditFile`. Every record is also published as the Cordis event
// `dsh-allow/decided`, in the gate's own shape, for observers in the process.
//
// Each line goes to the file in one write(2) on a descriptor opened with
// O_APPEND, so writers in several DSH processes never interleave inside a
// line; a line left cut short by an earlier crash or full disk is ended
// first, so it never swallows the next record. Commands and reasons pass
// through the core's `redact` first: the ledger outlives the session and
// must not become a second copy of a token. A command past the core's line
// limit (refused for its size) is kept as its first 4,000 characters and its
// size. The file and its folder are protected paths (index.js hands
// `auditFile` to the core), so no agent call can rewrite history.
//
// A record that cannot be written is never lost silently: `append` returns
// the failure, and the gate refuses the call (`auditFailure: refuse`, the
// default) or runs it with a warning in its result (`warn`); `health()`
// feeds `/allow status`.

import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/** Marks our lines among whatever else might share the file (`LEDGER_VERSION`). */
export const LEDGER_VERSION = 1

const TIERS_OF_RULES = new Set(['rule', 'grant'])

/** The core refuses a command line longer than this (src/shell/parse.rs MAX_COMMAND_BYTES). */
export const MAX_COMMAND_BYTES = 64 * 1024
/** What the ledger keeps of a command past that limit (as the reviewer is shown, src/decide/review.rs). */
export const KEPT_COMMAND_CHARS = 4000

/** DSH's approval outcomes, as the human actions the ledger names. */
const ACTIONS = {
  'allowed-once': 'allow-once',
  rejected: 'deny',
  cancelled: 'cancelled',
  unavailable: 'unavailable',
}

/**
 * Who decided a call: the administrator's managed policy (`managed`) when it
 * refused or asked; for an allowed call, a stored rule, a deployment grant
 * or a command grant is `rule`; hidden code or computed paths bounded by the
 * kernel fence are `fence`; everything else that allows without asking is
 * the platform `baseline`. Other refusals and prompts are this plugin's
 * `policy` (a prompt's row turns `human` when its answer is folded in).
 */
export function sourceOf(record) {
  if (record.managed === true) return 'managed'
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
    const command = String(record.command ?? (record.path !== undefined ? `${record.tool} ${record.path}` : ''))
    const bytes = Buffer.byteLength(command)
    const line = {
      ...head,
      kind: 'decision',
      time: record.time,
      tool: record.tool,
      command: bytes > MAX_COMMAND_BYTES ? cutCommand(redact(command)) : redact(command),
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
    // What the kernel carries wider than the card's paths, if allowed once.
    if (Array.isArray(record.widened) && record.widened.length > 0) line.widened = record.widened.map((w) => redact(String(w)))
    if (bytes > MAX_COMMAND_BYTES) line.commandBytes = bytes
    // Where the call stood, so a reader can show its paths as `build/` or `~/.ssh/…`.
    if (typeof record.workspace === 'string') line.workspace = record.workspace
    if (typeof record.home === 'string') line.home = record.home
    return line
  }
  if (record.kind === 'kernel') {
    const denied = (record.denied ?? []).filter((d) => typeof d.path === 'string' && d.path !== '')
    if (denied.length === 0) return undefined
    // One capability when the runner, the error or the fence names it
    // (the runner also names the system call and the program); otherwise
    // every capability the call's fence withheld there (one of them was refused).
    const entry = ({ path, capability, withheld, door, operation, program }) => (typeof door === 'string'
      ? { path, capability: null, door }
      : typeof operation === 'string'
        ? { path, capability: capability ?? null, operation, program: typeof program === 'string' ? program : null }
        : capability || !Array.isArray(withheld) || withheld.length === 0
          ? { path, capability: capability ?? null }
          : { path, capability: null, withheld })
    return { ...head, kind: 'kernel', time: record.time, denied: denied.map(entry) }
  }
  if (record.kind === 'not-run') {
    return { ...head, kind: 'not-run', time: record.time, why: redact(String(record.why ?? '')) }
  }
  if (record.kind === 'review') {
    return {
      ...head, kind: 'review', time: record.time, verdict: record.verdict,
      reason: redact(String(record.reason ?? '')), latencyMs: record.latencyMs, route: record.route,
    }
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
      // Allowed once, the kernel carried this wider than the card's paths.
      ...(Array.isArray(record.widened) && record.widened.length > 0 ? { widened: record.widened.map((w) => redact(String(w))) } : {}),
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
      source: record.managed === true ? 'managed' : (record.source ?? 'host'),
      mode: record.mode ?? '',
      stored: (record.stored ?? []).map(ruleView),
      // Where paths are read from, so the tab shows `~/…` as in other rows.
      ...(typeof record.home === 'string' ? { home: record.home } : {}),
      ...(typeof record.workspace === 'string' ? { workspace: record.workspace } : {}),
    }
  }
  return undefined
}

/** The first characters of a command, never splitting a surrogate pair. */
function cutCommand(text) {
  let end = KEPT_COMMAND_CHARS
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end -= 1
  return text.slice(0, end)
}

/**
 * Append one line with a single write on an O_APPEND descriptor. The folder
 * is created private; the file is created 0600. When the file does not end
 * a line (a crash or a full disk cut the last one short), the write starts
 * with a newline, so the cut line stays alone and is skipped by the fold.
 * Throws on anything that keeps the line from the file: a folder or a FIFO
 * at the path, a read-only or immutable file, a full disk, a short write.
 */
export function appendLine(file, line) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  // O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of hanging the call.
  const fd = openSync(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK, 0o600)
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'ENOTREG' })
    let lead = ''
    if (st.size > 0) {
      const last = Buffer.alloc(1)
      if (readSync(fd, last, 0, 1, st.size - 1) === 1 && last[0] !== 0x0a) lead = '\n'
    }
    const bytes = Buffer.from(`${lead}${line.endsWith('\n') ? line : `${line}\n`}`, 'utf8')
    const written = writeSync(fd, bytes, 0, bytes.length)
    if (written !== bytes.length) {
      throw Object.assign(new Error(`short write to ${file} (${written} of ${bytes.length} bytes; the disk may be full)`), { code: 'ESHORT' })
    }
  } finally {
    closeSync(fd)
  }
}

/**
 * The ledger of one plugin instance. `config.audit === false` turns the file
 * off (records are still published) unless `required()` says the managed
 * policy requires it, which also makes every failure refuse its call
 * (`failure`), whatever `auditFailure` says. `append(record)` returns undefined
 * when the line is in the file (or there is no file), else
 * `{ file, error, code }`: what kept it out, for the gate to refuse the
 * call or warn (`config.auditFailure`). A call's lost records are kept by
 * call id until the gate settles it (`lostFor`, `forget`): an answer or a
 * review written after the gate decided counts as much as its decision.
 * `health()` says what was lost, for `/allow status`.
 */
export function createLedger(config, { redact, publish, onError, required = () => false } = {}) {
  const clean = typeof redact === 'function' ? redact : (text) => text
  const health = { lost: 0, last: undefined, lastOk: true }
  const lostCalls = new Map()
  const fileNow = () => (config.audit === false && !required() ? undefined : config.auditFile)
  return {
    get file() {
      return fileNow()
    },
    get failure() {
      return config.auditFailure === 'warn' && !required() ? 'warn' : 'refuse'
    },
    /** Whether the managed policy requires every record. */
    get required() {
      return required()
    },
    append(record) {
      let failed
      const file = fileNow()
      if (file !== undefined) {
        try {
          const line = ledgerRecord(record, clean)
          if (line !== undefined) appendLine(file, JSON.stringify(line))
          health.lastOk = true
        } catch (error) {
          failed = { file, code: error.code ?? 'EIO', error: error.message ?? String(error) }
          health.lost += 1
          health.last = { ...failed, time: new Date().toISOString(), callId: record.callId }
          health.lastOk = false
          if (typeof record.callId === 'string') lostCalls.set(record.callId, failed)
          onError?.(error)
        }
      }
      publish?.(record)
      return failed
    },
    health: () => ({ ...health }),
    lostFor: (callId) => lostCalls.get(callId),
    forget: (callId) => { lostCalls.delete(callId) },
  }
}

/**
 * The sentence a call's result carries when a record of it could not be
 * written: `refused` (auditFailure: refuse kept it from running), `ran` (it
 * ran unrecorded: auditFailure: warn, or a record written after it ran),
 * `unrecorded` (it did not run for another reason).
 */
export function lostRecordText(lost, how, required = false) {
  const why = lost.error.includes(lost.file) ? lost.error : `${lost.error} (${lost.file})`
  const head = `the audit ledger ${lost.file} could not record this call (${lost.code}: ${why})`
  if (how === 'refused' && required) {
    return `dsh-allow: nothing ran — ${head}. The managed policy requires the audit ledger: no call runs that it cannot record. ` +
      'This is not the command\'s fault: do not retry it another way; tell the user, who can fix the file.'
  }
  if (how === 'refused') {
    return `dsh-allow: nothing ran — ${head}. dsh-allow does not run what it cannot record (auditFailure: refuse). ` +
      'This is not the command\'s fault: do not retry it another way; tell the user, who can fix the file (or set auditFailure: warn).'
  }
  if (how === 'ran') return `dsh-allow: warning: ${head}; it ran unrecorded.`
  return `dsh-allow: warning: ${head}.`
}
