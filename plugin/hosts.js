// The DSH processes whose listeners no fenced call may reach: this one,
// and every other DSH process that loaded dsh-allow with the same harness
// home (a `dsh web` beside a headless session). Each writes its pid into a
// folder of the harness home while it runs; the profile of every call
// names them all (`hostPids`) and the runner refuses a connection to any
// socket they hold. The folder is among the protected paths: no fenced
// call may add to it or take a host out of it.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export class Hosts {
  constructor(dir, pid = process.pid) {
    this.dir = dir
    this.pid = pid
  }

  /** Write this process's entry (its start time guards against a reused pid). */
  register() {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 })
      writeFileSync(join(this.dir, String(this.pid)), startTime(this.pid) ?? '')
    } catch {
      // Still this process itself: the runner also counts its parent.
    }
    return () => rmSync(join(this.dir, String(this.pid)), { force: true })
  }

  /** This process and the registered ones still running as registered. */
  pids() {
    const out = [this.pid]
    let names = []
    try {
      names = readdirSync(this.dir)
    } catch {
      return out
    }
    for (const name of names) {
      const pid = Number(name)
      if (!Number.isInteger(pid) || pid <= 1 || pid === this.pid) continue
      let recorded
      try {
        recorded = readFileSync(join(this.dir, name), 'utf8')
      } catch {
        continue
      }
      const now = startTime(pid)
      if (now === undefined || (recorded !== '' && recorded !== now)) {
        // Gone, or its pid now names another process.
        rmSync(join(this.dir, name), { force: true })
        continue
      }
      out.push(pid)
    }
    return out
  }
}

/** A process's start time (field 22 of /proc/PID/stat), or undefined. */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}
