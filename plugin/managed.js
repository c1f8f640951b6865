// The managed policy's files: read here, judged by the core.
//
// An administrator's file at the platform's fixed path (the core's
// `managedSystemFile`: /etc/dsh-allow/managed.json on Linux) and any further
// files the host's config names (`managedFiles`), which add to it and never
// stand in for it. Every file is read on each load while its identity and
// times change, so an administrator's edit counts from the next call. A
// system file that is not there is no policy; a file that is there but
// cannot be read, a file the config names that is not there, or one the core
// cannot parse is a fault of the whole policy, which refuses every call (the
// core's `Managed::refusal`) — nothing falls back to the user's rules alone.
// Each file is a protected path (index.js), so no call, rule or card writes it.

import { readFileSync, statSync } from 'node:fs'

export class ManagedFiles {
  /**
   * @param {{ system: string|undefined, extra: string[], core: { managedPolicy: Function } }} options
   * `system` is undefined on a platform dsh-allow has no fence for.
   */
  constructor({ system, extra = [], core }) {
    this.system = system
    this.extra = extra
    this.core = core
    this.cached = undefined
  }

  /** Every file that is or may become the policy: all of them are protected paths. */
  files() {
    return [...(this.system === undefined ? [] : [this.system]), ...this.extra]
  }

  /**
   * `{ policy, files }`: the merged policy (undefined when no file is
   * there) and each file's state (`absent` | `read` | `fault`, with
   * `error`), for `/allow status`. The same object while no file changed.
   */
  load() {
    const seen = this.files().map((file) => ({ file, stat: stamp(file) }))
    const key = seen.map((s) => s.stat.key).join('|')
    if (this.cached?.key === key) return this.cached.load
    const sources = []
    const files = []
    for (const { file, stat } of seen) {
      if (stat.missing && file === this.system) {
        files.push({ file, state: 'absent' })
        continue
      }
      const source = stat.error !== undefined ? { file, error: stat.error } : read(file)
      sources.push(source)
      files.push({ file, state: source.error === undefined ? 'read' : 'fault', error: source.error })
    }
    const policy = sources.length === 0 ? undefined : Object.freeze(this.core.managedPolicy(sources))
    // A file the core could not parse is a fault too, named as the core names it.
    for (const f of files) {
      const why = policy?.errors?.find((e) => e.startsWith(`${f.file}: `))
      if (f.state === 'read' && why !== undefined) Object.assign(f, { state: 'fault', error: why.slice(f.file.length + 2) })
    }
    const load = Object.freeze({ policy, files })
    this.cached = { key, load }
    return load
  }
}

/** What identifies a file's content now, or why it cannot be had. */
function stamp(file) {
  try {
    const st = statSync(file, { throwIfNoEntry: false })
    if (st === undefined) return { key: `${file}:missing`, missing: true, error: 'it is named in the dsh-allow config but not there' }
    // A FIFO or a device would hang the read or never end it.
    if (!st.isFile()) return { key: `${file}:${st.ino}:odd`, error: 'it is not a regular file' }
    return { key: `${file}:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` }
  } catch (error) {
    return { key: `${file}:error:${error.code}`, error: `${error.code ?? 'error'}: ${error.message}` }
  }
}

function read(file) {
  try {
    return { file, text: readFileSync(file, 'utf8') }
  } catch (error) {
    return { file, error: `${error.code ?? 'error'}: ${error.message}` }
  }
}

/**
 * The managed deny entry a write tool's target lies in (write or create
 * denied there), as the sentence the tool's refusal gives; the shell's calls
 * are the core's to decide, the write and edit tools' only this check.
 */
export function writeDenial(policy, path, home) {
  const expand = (p) => (p === '~' ? home : p.startsWith('~/') ? `${home}/${p.slice(2)}` : p)
  for (const entry of policy?.deny ?? []) {
    if (entry.access?.write !== true && entry.access?.create !== true) continue
    const root = expand(entry.path).replace(/\/+$/, '') || '/'
    const inside = path === root || (entry.recursive !== false && path.startsWith(root === '/' ? '/' : `${root}/`))
    if (inside) return `the managed policy denies write on ${entry.path} for everyone (${entry.id})`
  }
  return undefined
}
