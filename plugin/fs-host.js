// What the pure core asks the world (wit `host` interface): real paths, what
// is at a path, and PATH lookup. Answered here with node:fs for the decision
// made in this process.

import { accessSync, constants, realpathSync, statSync } from 'node:fs'
import { basename, delimiter, dirname, join, resolve } from 'node:path'

/**
 * The real path of an absolute spelling: the deepest existing ancestor
 * resolved through symlinks, the missing rest re-appended, so a file about
 * to be created compares equal to its canonical parent's children.
 */
export function canonical(path) {
  let current = resolve(path)
  const missing = []
  for (;;) {
    try {
      return join(realpathSync.native(current), ...missing.reverse())
    } catch {
      const parent = dirname(current)
      if (parent === current) return resolve(path)
      missing.push(basename(current))
      current = parent
    }
  }
}

export function kind(path) {
  try {
    const st = statSync(path)
    return st.isDirectory() ? 'dir' : 'file'
  } catch {
    return 'missing'
  }
}

export function makeWhich(env = process.env) {
  return (program) => {
    if (!program || program.includes('/')) return undefined
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (!dir) continue
      const candidate = join(dir, program)
      try {
        if (!statSync(candidate).isFile()) continue
        accessSync(candidate, constants.X_OK)
        return candidate
      } catch {}
    }
    return undefined
  }
}

/** The host object the core's `decide(request, host)` takes. */
export function fsHost(env = process.env) {
  const which = makeWhich(env)
  return { canonical, kind, which }
}
