// How a call's profile reaches the Linux runner: as a file, never as one
// argument. Linux caps a single argument at 128 KiB (MAX_ARG_STRLEN), which a
// profile passes at about 1,000 stored rules; `spawn` then fails with E2BIG
// and no fenced call runs at all.
//
// Each profile is written once to a file named by the SHA-256 of its text,
// in a folder that is among the profile's own protected paths (index.js), so
// no fenced command can write it: the runner reads the profile the plugin
// wrote. A file this process wrote is trusted while its identity and times
// are the ones it left (any change to a file moves its ctime); otherwise it
// is read back and compared before it is used, and rewritten when it
// differs. Files not used for a while are removed, keeping the folder small.

import { createHash, randomBytes } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/** A store's rules as the fence reads them, by the store's frozen array. */
const FENCE_RULES = new WeakMap()

/**
 * The rules as the runner reads them: each one's path, recursion and
 * access. Its id, hits and date are the ledger's and the card's; the fence
 * never reads them, and with thousands of rules they are ~40% of what the
 * runner would parse on every call. Same array in, same array out, so a
 * session's profile stays the one the last call handed over.
 */
export function fenceRules(rules) {
  if (!Array.isArray(rules)) return rules
  const known = FENCE_RULES.get(rules)
  if (known !== undefined) return known
  const out = Object.freeze(rules.map((r) => Object.freeze({ path: r.path, recursive: r.recursive, access: r.access })))
  if (Object.isFrozen(rules)) FENCE_RULES.set(rules, out)
  return out
}

/** Profiles kept at once; one-shot grants make a new profile per call. */
const KEEP = 64
/** A file younger than this may be about to be read by a runner (of any session). */
const IN_USE_MS = 60_000

export class ProfileFiles {
  /** @param {string} dir - a folder among the profile's protected paths. */
  constructor(dir) {
    this.dir = dir
    /** file → `ino:size:mtime:ctime` as this process last wrote or checked it. */
    this.checked = new Map()
    this.lastTouch = new Map()
    /** The last profile handed over: its rules (by identity), the rest as JSON, its file. */
    this.last = undefined
  }

  /**
   * The file for a profile request. A session hands the same rules (the
   * store's frozen array) call after call: while they and the rest of the
   * profile are the ones of the last call and the file is as it was left,
   * that file is the answer without the JSON and hash of every rule.
   */
  forProfile(profile) {
    const rest = JSON.stringify({ ...profile, rules: undefined })
    const last = this.last
    if (last !== undefined && last.rules === profile.rules && Object.isFrozen(profile.rules) && last.rest === rest && stampOf(last.file) === this.checked.get(last.file)) {
      this.touch(last.file)
      return last.file
    }
    const file = this.fileFor(JSON.stringify(profile))
    this.last = { rules: profile.rules, rest, file }
    return file
  }

  /**
   * The file holding `text` (the profile's JSON), written if it is not there
   * as it should be. Throws, naming the folder, when it cannot be: confine
   * then fails and the call does not run.
   */
  fileFor(text) {
    try {
      return this.place(text)
    } catch (error) {
      throw new Error(`dsh-allow: the call's fence profile could not be written to ${this.dir} (${error.code ?? 'error'}: ${error.message}); nothing ran`)
    }
  }

  place(text) {
    const file = join(this.dir, `${createHash('sha256').update(text).digest('hex').slice(0, 40)}.json`)
    const stamp = stampOf(file)
    if (stamp === undefined || stamp !== this.checked.get(file)) {
      if (stamp === undefined || !sameText(file, text)) {
        this.write(file, text)
        this.prune(file)
      }
      this.checked.set(file, stampOf(file))
    }
    this.touch(file)
    return file
  }

  write(file, text) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    const fd = openSync(tmp, 'wx', 0o600)
    try {
      const bytes = Buffer.from(text, 'utf8')
      if (writeSync(fd, bytes, 0, bytes.length) !== bytes.length) throw new Error(`short write to ${tmp}`)
    } finally {
      closeSync(fd)
    }
    try {
      renameSync(tmp, file)
    } catch (error) {
      rmSync(tmp, { force: true })
      throw error
    }
  }

  /**
   * Mark a file in use (its mtime), at most once a second per file, so that
   * pruning from any process leaves it alone. Moving mtime moves ctime:
   * the file's stamp is taken again.
   */
  touch(file) {
    const now = Date.now()
    if (now - (this.lastTouch.get(file) ?? 0) < 1000) return
    this.lastTouch.set(file, now)
    try {
      utimesSync(file, now / 1000, now / 1000)
      this.checked.set(file, stampOf(file))
    } catch {
      // Only a hint for pruning.
    }
  }

  /** Remove the oldest profiles beyond KEEP that no runner can still be about to read. */
  prune(keep) {
    let names
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json'))
    } catch {
      return
    }
    if (names.length <= KEEP) return
    const now = Date.now()
    const aged = names.map((n) => join(this.dir, n)).filter((f) => f !== keep)
      .map((f) => ({ f, m: statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? now }))
      .filter(({ m }) => now - m > IN_USE_MS)
      .sort((a, b) => a.m - b.m)
    for (const { f } of aged.slice(0, names.length - KEEP)) {
      rmSync(f, { force: true })
      this.checked.delete(f)
      this.lastTouch.delete(f)
    }
  }
}

function stampOf(file) {
  const st = statSync(file, { throwIfNoEntry: false, bigint: true })
  return st === undefined ? undefined : `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`
}

function sameText(file, text) {
  try {
    return readFileSync(file, 'utf8') === text
  } catch {
    return false
  }
}
