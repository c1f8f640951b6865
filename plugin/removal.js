// The one removal Landlock cannot express.
//
// Landlock attaches delete to the folder that holds an entry: a delete rule
// on `build` lets the kernel empty `build`, but removing `build` itself needs
// delete on its parent, which the rule never granted. So after a granted
// `rm -rf build` the confined command leaves an empty `build` behind and
// fails with "Permission denied". When — and only when — the user granted
// that delete (a stored rule or this call's own one-shot grant), the kernel
// refused something in this very run, and the path is now an empty folder
// (or, for a rule on the file itself, that file), the host process finishes
// that one removal and says so in the result. Nothing else is ever touched:
// not a folder with contents, not a symlink, not a path the same command
// creates or writes again after removing it, not a file a command both
// removes and creates elsewhere (a failed `mv` must not lose its source).

import { lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs'
import { sep } from 'node:path'

const GRANTING_TIERS = new Set(['rule', 'grant'])

function within(path, root) {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}

/**
 * The removals to complete for one finished call: `[{ path, kind }]`.
 * `d` is the decision the call ran under (the guard's, with its grants),
 * `value` the bash tool's canonical result value.
 */
export function pendingRemovals(d, value, { platform, fenced }) {
  if (platform !== 'linux' || !fenced) return []
  if (d === undefined || d.mode === 'danger-full-access' || d.decision.decision !== 'allow') return []
  if (value?.kind !== 'foreground' || value.sandbox?.denied !== true) return []
  const effects = d.decision.effects ?? []
  const rules = [...(d.request.rules ?? []), ...(d.request.grants ?? [])]
  const makes = (e) => e.capability === 'create' || e.capability === 'write'
  const out = []
  for (const [at, e] of effects.entries()) {
    if (e.capability !== 'delete' || !e.granted || !GRANTING_TIERS.has(e.tier)) continue
    if (out.some((r) => r.path === e.path)) continue
    // Effects come in command order: `mkdir build && rm -rf build` wants it
    // gone, `rm -rf build; mkdir build` wants it back.
    if (effects.slice(at + 1).some((m) => makes(m) && within(m.path, e.path))) continue
    let st
    try {
      st = lstatSync(e.path)
    } catch {
      continue
    }
    if (st.isDirectory()) {
      if (readdirSync(e.path).length === 0) out.push({ path: e.path, kind: 'dir' })
    } else if (st.isFile()) {
      const rule = rules.find((r) => r.id === e.ruleId)
      const fileRule = rule !== undefined && rule.recursive === false && rule.path === e.path
      if (fileRule && !effects.some(makes)) out.push({ path: e.path, kind: 'file' })
    }
  }
  return out
}

/** Remove what `pendingRemovals` named; returns the one-line notes. */
export function completeRemovals(removals) {
  const notes = []
  for (const { path, kind } of removals) {
    try {
      if (kind === 'dir') rmdirSync(path)
      else unlinkSync(path)
    } catch {
      continue
    }
    notes.push(kind === 'dir'
      ? `dsh-allow: removed the empty folder ${path} from the host process: the granted delete emptied it, but Landlock cannot let a command remove a folder itself without opening its parent.`
      : `dsh-allow: removed ${path} from the host process: delete was granted for this file, but Landlock cannot let a command remove one file without opening its parent folder.`)
  }
  return notes
}
