// The rules file: read, cached, and rewritten safely.
//
// Writes are atomic (temp file in the same folder, fsync, rename, fsync of
// the folder) and one writer at a time across processes (an O_EXCL lock file
// beside the rules file). A file that is not exactly version 3, well formed
// — corrupt, empty, another version, an unknown key — is a fault: it reads
// as no rules *and an error*, so every call asks (the gate) and the user is
// told (the card, `/allow`); it is never overwritten or emptied, since what
// we cannot read may hold the user's denials. No file at all is no rules,
// unless this process has seen the file: a file that vanishes in the middle
// of a session is a fault too. While the file is at fault, the kernel fence
// keeps the last rules this process read whole (index.js).
// Only the configured file is ever read: nothing is looked up in a workspace,
// because repository contents must never grant host permissions.

import { randomBytes } from 'node:crypto'
import {
  closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync,
  rmSync, statSync, writeSync,
} from 'node:fs'
import { dirname } from 'node:path'

const LOCK_STALE_MS = 30_000
const LOCK_WAIT_MS = 5_000

export class RulesFileError extends Error {
  constructor(file, detail) {
    super(`the rules file ${file} cannot be used: ${detail}; nothing was written to it`)
    this.name = 'RulesFileError'
    this.detail = detail
  }
}

export class RulesStore {
  /**
   * @param {string} file - absolute path of the rules file.
   * @param {{ parseRules: Function, renderRules: Function }} core
   */
  constructor(file, core) {
    this.file = file
    this.core = core
    this.lockFile = `${file}.lock`
    this.cached = undefined
    /** The last load that read the whole file: `{ rules, commands, at }`. */
    this.lastGood = undefined
    /** Whether this process has seen the file: from then on, no file is a fault. */
    this.seen = false
    /** Told of every change (changes.js): `{ before, after, error?, source, sessionId?, command? }`. */
    this.onChange = undefined
    /** A write of ours is being read back: not a change someone else made. */
    this.writing = false
    /** The fault last told, so a file that stays faulty is told once. */
    this.toldFault = undefined
  }

  /** A change this process did not make, or a fault, as the next read finds it. */
  notice(previous, load) {
    if (this.writing || this.onChange === undefined) return
    if (load.error !== undefined) {
      if (this.toldFault !== load.error && previous !== undefined) this.onChange({ before: previous, error: load.error, source: 'file' })
      this.toldFault = load.error
      return
    }
    this.toldFault = undefined
    if (previous !== undefined && previous !== this.lastGood) this.onChange({ before: previous, after: load, source: 'file' })
  }

  /** Every path this store writes: all of them are protected from the agent. */
  files() {
    return [this.file, this.lockFile]
  }

  /**
   * The current rules: `{ file, rules, commands, error?, warnings, lastGood? }`.
   * Synchronous (decisions and confine are synchronous) and cached by the
   * file's identity, so an unchanged file is not re-read. On `error` there
   * are no rules, and `lastGood` holds the rules last read whole, if any.
   */
  load() {
    let stamp
    try {
      // No file is the common case: asked without an exception (a thrown
      // ENOENT cost more than the rest of a decision).
      const st = statSync(this.file, { throwIfNoEntry: false })
      if (st === undefined) {
        const stamp = this.seen ? 'gone' : 'missing'
        if (this.cached?.stamp === stamp) return this.cached.load
        const previous = this.lastGood
        const load = this.seen ? this.faulty(this.vanished()) : this.loaded(emptyLoad())
        if (this.seen) this.notice(previous, load)
        return this.remember(stamp, load)
      }
      // A FIFO or a device would hang the read or never end it.
      if (!st.isFile()) {
        this.seen = true
        return this.remember(undefined, this.faulty('it is not a regular file'))
      }
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`
    } catch (error) {
      return this.remember(undefined, this.faulty(`${error.code ?? 'error'}: ${error.message}`))
    }
    this.seen = true
    if (this.cached?.stamp === stamp) return this.cached.load
    let text
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (error) {
      return this.remember(undefined, this.faulty(`${error.code ?? 'error'}: ${error.message}`))
    }
    const previous = this.lastGood
    const load = this.parse(text)
    this.notice(previous, load)
    return this.remember(stamp, load)
  }

  parse(text) {
    const load = this.core.parseRules(text)
    if (load.error) return this.faulty(load.error)
    return this.loaded({ rules: load.rules ?? [], commands: load.commands ?? [], error: undefined, warnings: load.warnings ?? [] })
  }

  /**
   * A load read whole. Frozen, rules and all: the gate and the profile
   * files know an unchanged rule set by its identity.
   */
  loaded(load) {
    const rules = deepFreeze(load.rules)
    const commands = deepFreeze(load.commands)
    this.lastGood = { rules, commands, at: new Date().toISOString() }
    return Object.freeze({ file: this.file, ...load, rules, commands })
  }

  /** A fault: no rules, the error, and what the file held when last read whole. */
  faulty(error) {
    const held = this.lastGood === undefined || !this.seen ? '' : ` (when this session last read it whole it held ${count(this.lastGood.rules.length, 'rule')})`
    return { file: this.file, ...emptyLoad(), error: `${error}${held}`, lastGood: this.lastGood }
  }

  vanished() {
    return 'it was there when this session read it and is gone; every call asks until it is back (put it back, or write {"version": 3, "rules": []} to start with no rules)'
  }

  remember(stamp, load) {
    this.cached = stamp === undefined ? undefined : { stamp, load }
    return load
  }

  /**
   * Change the stored rules under the cross-process lock. `change` gets the
   * freshly read `{ rules, commands }` and returns the new pair (or undefined
   * for "no change"). Throws RulesFileError, leaving the file untouched, when
   * the current file does not parse. `by` names who changed it for the
   * ledger: `{ source: 'card' | 'command', sessionId, command }`.
   */
  async update(change, by = { source: 'command' }) {
    const release = await this.lock()
    try {
      let current
      try {
        if (statSync(this.file, { throwIfNoEntry: false })?.isFile() === false) throw new RulesFileError(this.file, 'it is not a regular file')
        const previous = this.lastGood
        current = this.parse(readFileSync(this.file, 'utf8'))
        this.notice(previous, current)
        this.seen = true
      } catch (error) {
        if (error instanceof RulesFileError) throw error
        if (error.code !== 'ENOENT') throw new RulesFileError(this.file, error.message)
        // Gone after this process saw it: writing now would drop what it held.
        if (this.seen) throw new RulesFileError(this.file, this.vanished())
        current = this.loaded(emptyLoad())
      }
      if (current.error !== undefined) throw new RulesFileError(this.file, current.error)
      const next = change({ rules: current.rules, commands: current.commands })
      if (next === undefined) return current
      writeAtomic(this.file, this.core.renderRules(next.rules, next.commands ?? current.commands))
      this.seen = true
      this.cached = undefined
      this.writing = true
      let after
      try {
        after = this.load()
      } finally {
        this.writing = false
      }
      this.onChange?.({ before: current, after, ...by })
      return after
    } finally {
      release()
    }
  }

  /** Take the writer lock, waiting for another writer; a dead writer's lock is broken. */
  async lock() {
    mkdirSync(dirname(this.file), { recursive: true })
    const deadline = Date.now() + LOCK_WAIT_MS
    for (;;) {
      try {
        const fd = openSync(this.lockFile, 'wx', 0o600)
        writeSync(fd, `${process.pid} ${new Date().toISOString()}\n`)
        closeSync(fd)
        return () => rmSync(this.lockFile, { force: true })
      } catch (error) {
        if (error.code !== 'EEXIST') throw error
      }
      if (lockIsStale(this.lockFile)) {
        rmSync(this.lockFile, { force: true })
        continue
      }
      if (Date.now() > deadline) throw new Error(`dsh-allow: ${this.lockFile} is held by another writer; try again`)
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30))
    }
  }
}

function lockIsStale(lockFile) {
  try {
    const [pid] = readFileSync(lockFile, 'utf8').split(' ')
    if (Date.now() - statSync(lockFile).mtimeMs > LOCK_STALE_MS) return true
    const n = Number(pid)
    if (!Number.isInteger(n) || n <= 0) return false
    try {
      process.kill(n, 0)
      return false
    } catch (error) {
      return error.code === 'ESRCH'
    }
  } catch {
    return false
  }
}

/** Write a file so a reader sees the old bytes or the new ones, never a mix. */
export function writeAtomic(file, text) {
  const dir = dirname(file)
  mkdirSync(dir, { recursive: true })
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const fd = openSync(tmp, 'wx', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    renameSync(tmp, file)
  } catch (error) {
    rmSync(tmp, { force: true })
    throw error
  }
  const dfd = openSync(dir, 'r')
  try {
    fsyncSync(dfd)
  } finally {
    closeSync(dfd)
  }
}

function emptyLoad() {
  return { rules: [], commands: [], error: undefined, warnings: [] }
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

function count(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
