// Reading the end of the audit ledger for the Approvals tab.
//
// The ledger only grows, and a view wants the newest calls of one session,
// so the reader walks backwards from the end in fixed-size chunks, stitching
// the line a chunk boundary cuts in two, and stops at whichever comes first:
// the start of the file, `maxBytes` (4 MiB), or enough of the session's
// decisions for `MAX_ROWS` rows. What it kept is cached with the file's
// identity (inode, size, mtime): asking again without new writes reads zero
// bytes, and after an append only the new bytes are read.
//
// Lines are kept or dropped by a plain substring test on the session id as
// our writer spells it (`,"sessionId":"…",`). That is only a cheap
// pre-filter: a line that passes it is still parsed and checked by the core's
// `foldLedger`, which alone decides what a row is.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

export const CHUNK_BYTES = 64 * 1024
export const MAX_BYTES = 4 * 1024 * 1024
export const MAX_ROWS = 500
const NEWLINE = 0x0a
const CACHED_SESSIONS = 16
const EMPTY = Buffer.alloc(0)

/** The substring every line of `sessionId` carries (see ledger.js key order). */
export function sessionMarker(sessionId) {
  return sessionId === undefined ? '' : `,"sessionId":${JSON.stringify(sessionId)},`
}

const DECISION_PREFIX = '{"dshAllow":1,"kind":"decision",'

export class LedgerTail {
  /**
   * @param {string} file - the ledger.
   * @param {{ foldLedger: Function }} core - the core's fold (wasm).
   */
  constructor(file, core, { chunkBytes = CHUNK_BYTES, maxBytes = MAX_BYTES, maxRows = MAX_ROWS } = {}) {
    this.file = file
    this.core = core
    this.chunkBytes = chunkBytes
    this.maxBytes = maxBytes
    this.maxRows = maxRows
    /** Bytes read from the file over this reader's life (tests, benches). */
    this.bytesRead = 0
    /** session key → window: { ino, size, mtimeMs, end, lines, bytes, decisions, truncated, folds } */
    this.windows = new Map()
  }

  /**
   * The kept lines of one session (all sessions when undefined), oldest
   * first: `{ text, lines, bytes, truncated }`.
   */
  window(sessionId) {
    const key = sessionId ?? ''
    let fd
    try {
      fd = openSync(this.file, 'r')
    } catch (error) {
      if (error.code !== 'ENOENT') throw error
      this.windows.delete(key)
      return emptyWindow()
    }
    try {
      const st = fstatSync(fd)
      let w = this.windows.get(key)
      if (w !== undefined && w.ino === st.ino && w.size === st.size && w.mtimeMs === st.mtimeMs) {
        this.touch(key, w)
        return w
      }
      const grown = w !== undefined && w.ino === st.ino && st.size >= w.end && st.size - w.end <= this.maxBytes
      w = grown ? this.extend(fd, w, st, sessionId) : this.scan(fd, st, sessionId)
      this.touch(key, w)
      return w
    } finally {
      closeSync(fd)
    }
  }

  /**
   * Fold the session's window with the core: `{ rows, skipped,
   * hiddenBaseline, bytes, truncated }`. Cached with the window.
   */
  read({ sessionId, limit = this.maxRows, baseline = false } = {}) {
    const w = this.window(sessionId)
    const rowLimit = Math.max(1, Math.min(this.maxRows, Number(limit) || this.maxRows))
    const foldKey = `${rowLimit}:${baseline ? 1 : 0}`
    let folded = w.folds.get(foldKey)
    if (folded === undefined) {
      const options = { ...(sessionId === undefined ? {} : { sessionId }), limit: rowLimit, baseline: Boolean(baseline) }
      // JSON text across the wasm boundary is cheaper than building the rows field by field.
      folded = typeof this.core.foldLedgerJson === 'function'
        ? JSON.parse(this.core.foldLedgerJson(w.text, JSON.stringify(options)))
        : this.core.foldLedger(w.text, options)
      w.folds.set(foldKey, folded)
    }
    return { ...folded, bytes: w.bytes, truncated: w.truncated }
  }

  /**
   * Walk back from the end of the file, chunk by chunk. Bytes after the last
   * newline are a line still being written: they are left for a later read.
   */
  scan(fd, st, sessionId) {
    const needle = Buffer.from(sessionMarker(sessionId))
    const kept = []
    let decisions = 0
    let pos = st.size
    let end
    let carry = EMPTY
    let truncated = false
    while (pos > 0) {
      if (end !== undefined && (end - pos >= this.maxBytes || decisions >= this.maxRows)) {
        truncated = true
        break
      }
      const budget = end === undefined ? this.chunkBytes : Math.min(this.chunkBytes, this.maxBytes - (end - pos))
      const size = Math.min(budget, pos)
      // The chunk, then the carried start of the line it ends inside.
      let buf = Buffer.allocUnsafe(size + carry.length)
      readFully(fd, buf.subarray(0, size), pos - size)
      carry.copy(buf, size)
      this.bytesRead += size
      pos -= size
      if (end === undefined) {
        const last = buf.lastIndexOf(NEWLINE)
        carry = EMPTY
        if (last === -1) continue
        end = pos + last + 1
        buf = buf.subarray(0, last + 1)
      }
      // Bytes before the first newline belong to a line that started in an
      // earlier chunk (unless this is the start of the file): carry them.
      const first = pos === 0 ? -1 : buf.indexOf(NEWLINE)
      if (first === buf.length - 1 && pos > 0) {
        carry = buf
        continue
      }
      carry = buf.subarray(0, first + 1)
      const lines = linesWith(buf.subarray(first + 1), needle)
      for (let i = lines.length - 1; i >= 0; i--) {
        kept.push(lines[i])
        if (lines[i].startsWith(DECISION_PREFIX)) decisions += 1
      }
    }
    kept.reverse()
    return this.make(st, end ?? 0, kept, decisions, truncated)
  }

  /** The file grew: read only what was appended since the window's end. */
  extend(fd, w, st, sessionId) {
    const needle = Buffer.from(sessionMarker(sessionId))
    const fresh = Buffer.allocUnsafe(st.size - w.end)
    readFully(fd, fresh, w.end)
    this.bytesRead += fresh.length
    const last = fresh.lastIndexOf(NEWLINE)
    if (last === -1) return this.make(st, w.end, w.lines, w.decisions, w.truncated)
    const lines = w.lines.slice()
    let decisions = w.decisions
    for (const line of linesWith(fresh.subarray(0, last + 1), needle)) {
      lines.push(line)
      if (line.startsWith(DECISION_PREFIX)) decisions += 1
    }
    // Keep the window within the bounds a fresh scan would keep.
    let bytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0)
    let drop = 0
    while (drop < lines.length && (decisions > this.maxRows || bytes > this.maxBytes)) {
      if (lines[drop].startsWith(DECISION_PREFIX)) decisions -= 1
      bytes -= Buffer.byteLength(lines[drop]) + 1
      drop += 1
    }
    return this.make(st, w.end + last + 1, drop === 0 ? lines : lines.slice(drop), decisions, w.truncated || drop > 0)
  }

  make(st, end, lines, decisions, truncated) {
    const text = lines.length === 0 ? '' : `${lines.join('\n')}\n`
    return {
      ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, end,
      lines, text, bytes: Buffer.byteLength(text), decisions, truncated, folds: new Map(),
    }
  }

  touch(key, w) {
    this.windows.delete(key)
    this.windows.set(key, w)
    while (this.windows.size > CACHED_SESSIONS) this.windows.delete(this.windows.keys().next().value)
  }
}

function emptyWindow() {
  return { lines: [], text: '', bytes: 0, decisions: 0, truncated: false, folds: new Map() }
}

function splitLines(text) {
  return text.split('\n').filter((l) => l.trim() !== '')
}

/**
 * The lines of `buf` (whole lines, oldest first) that contain `needle`. The
 * search runs on the bytes, so only the kept lines are ever decoded: in a
 * ledger shared by many sessions most of the 4 MiB never becomes a string.
 */
function linesWith(buf, needle) {
  if (needle.length === 0) return splitLines(buf.toString('utf8'))
  const out = []
  let from = 0
  for (;;) {
    const hit = buf.indexOf(needle, from)
    if (hit === -1) return out
    const start = buf.lastIndexOf(NEWLINE, hit) + 1
    let end = buf.indexOf(NEWLINE, hit)
    if (end === -1) end = buf.length
    const line = buf.toString('utf8', start, end)
    if (line.trim() !== '') out.push(line)
    from = end + 1
  }
}

function readFully(fd, buf, position) {
  let off = 0
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, position + off)
    if (n === 0) throw new Error('the audit ledger shrank while it was read')
    off += n
  }
}
