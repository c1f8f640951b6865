// The rules file: read, cached, and rewritten safely.
//
// Writes are atomic (temp file in the same folder, fsync, rename, fsync of
// the folder) and one writer at a time across processes (an O_EXCL lock file
// beside the rules file). A file that fails to parse is reported — in
// `/allow` and in prompts — and never overwritten or emptied. An older-format
// file reads as no rules and is kept as `<file>.v2.bak` on the first write.
// Only the configured file is ever read: nothing is looked up in a workspace,
// because repository contents must never grant host permissions.

import { randomBytes } from 'node:crypto'
import {
  closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync,
  rmSync, statSync, writeSync,
} from 'node:fs'
import { dirname } from 'node:path'

const LOCK_STALE_MS = 30_000
const LOCK_WAIT_MS = 5_000

export class RulesFileError extends Error {
  constructor(file, detail) {
    super(`the rules file ${file} cannot be used: ${detail}; it is left unchanged — fix or remove it by hand`)
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
    this.backupFile = `${file}.v2.bak`
    this.cached = undefined
  }

  /** Every path this store writes: all of them are protected from the agent. */
  files() {
    return [this.file, this.lockFile, this.backupFile]
  }

  /**
   * The current rules: `{ rules, commands, error?, keepBackup, warnings }`.
   * Synchronous (decisions and confine are synchronous) and cached by the
   * file's identity, so an unchanged file is not re-read.
   */
  load() {
    let stamp
    try {
      // No file is the common case: asked without an exception (a thrown
      // ENOENT cost more than the rest of a decision).
      const st = statSync(this.file, { throwIfNoEntry: false })
      if (st === undefined) return this.remember('missing', emptyLoad())
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`
    } catch (error) {
      return this.remember(undefined, failedLoad(`${error.code ?? 'error'}: ${error.message}`))
    }
    if (this.cached?.stamp === stamp) return this.cached.load
    let text
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (error) {
      return this.remember(undefined, failedLoad(`${error.code ?? 'error'}: ${error.message}`))
    }
    return this.remember(stamp, this.parse(text))
  }

  parse(text) {
    const load = this.core.parseRules(text)
    return { rules: load.rules ?? [], commands: load.commands ?? [], error: load.error ?? undefined,
      keepBackup: Boolean(load.keepBackup), warnings: load.warnings ?? [] }
  }

  remember(stamp, load) {
    this.cached = stamp === undefined ? undefined : { stamp, load }
    return load
  }

  /**
   * Change the stored rules under the cross-process lock. `change` gets the
   * freshly read `{ rules, commands }` and returns the new pair (or undefined
   * for "no change"). Throws RulesFileError, leaving the file untouched, when
   * the current file does not parse.
   */
  async update(change) {
    const release = await this.lock()
    try {
      let text = ''
      try {
        text = readFileSync(this.file, 'utf8')
      } catch (error) {
        if (error.code !== 'ENOENT') throw new RulesFileError(this.file, error.message)
      }
      const current = this.parse(text)
      if (current.error !== undefined) throw new RulesFileError(this.file, current.error)
      const next = change({ rules: current.rules, commands: current.commands })
      if (next === undefined) return current
      if (current.keepBackup && !existsSync(this.backupFile)) writeAtomic(this.backupFile, text)
      writeAtomic(this.file, this.core.renderRules(next.rules, next.commands ?? current.commands))
      this.cached = undefined
      return this.load()
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
  return { rules: [], commands: [], error: undefined, keepBackup: false, warnings: [] }
}

function failedLoad(error) {
  return { ...emptyLoad(), error }
}
