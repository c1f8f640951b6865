// Mode changes while dsh-allow is loaded. A session switched to
// danger-full-access runs with no fence of ours (DSH does not even call
// confine), and a default preset of danger-full-access does that to every
// session created later, after a restart too. Neither may pass unseen:
// each is a ledger record and shows in `/allow status`. A switch to a mode
// the managed policy does not list is recorded as its refusal: the core
// refuses every call under that mode until the session switches back.

/** What a session event or a settings change means for the fence, or undefined. */
export function modeChange(type, data) {
  if (type === 'permission/preset' && typeof data?.preset === 'string') return { what: 'preset', value: data.preset }
  if (type === 'sandbox/mode' && typeof data?.mode === 'string') return { what: 'mode', value: data.mode }
  return undefined
}

export class Modes {
  constructor() {
    /** sessionId → { preset, mode, since } as last seen. */
    this.sessions = new Map()
    this.defaultPreset = undefined
  }

  /** Note a session's change; true when it leaves the fence behind. */
  note(sessionId, change, time) {
    const s = this.sessions.get(sessionId) ?? {}
    s[change.what] = change.value
    s.since = time
    this.sessions.set(sessionId, s)
    return change.value === 'danger-full-access'
  }

  /** The sessions now unfenced, for /allow status. */
  unfenced() {
    return [...this.sessions.entries()].filter(([, s]) => s.mode === 'danger-full-access' || s.preset === 'danger-full-access').map(([id, s]) => ({ sessionId: id, since: s.since }))
  }
}

/**
 * Listeners for the host's events: every session's permission and sandbox
 * events, and the `permission` settings namespace.
 */
export function watchModes({ modes, ledger, managed = () => undefined, now = () => new Date().toISOString() }) {
  let n = 0
  const record = (sessionId, fields) => ledger.append({ kind: 'mode', time: now(), sessionId, callId: `mode-${Date.now()}-${n++}`, ...fields })
  return {
    onSessionEvent(session, event) {
      const change = modeChange(event?.type, event?.data)
      if (change === undefined) return
      const sessionId = session?.id
      const unfenced = modes.note(sessionId, change, now())
      const listed = managed()?.modes
      if (change.what === 'mode' && Array.isArray(listed) && !listed.includes(change.value)) {
        record(sessionId, {
          command: `sandbox mode → ${change.value}`,
          reason: `refused: the managed policy (${managed().files.join(', ')}) allows only the sandbox modes ${listed.join(', ')}; no call of this session runs under ${change.value} until it switches back`,
          mode: change.value,
          managed: true,
        })
        return
      }
      if (unfenced && change.what === 'mode') {
        record(sessionId, {
          command: `${change.what === 'preset' ? 'permission preset' : 'sandbox mode'} → ${change.value}`,
          reason: 'DSH runs this session with no fence: dsh-allow decides, the kernel confines nothing',
          mode: change.value,
        })
      }
    },
    onSettings(ns, next, prev) {
      if (ns !== 'permission') return
      const value = next?.defaultPreset
      if (value === prev?.defaultPreset) return
      modes.defaultPreset = value
      record('*', {
        command: `default permission preset ${prev?.defaultPreset ?? '(none)'} → ${value ?? '(none)'}`,
        reason: value === 'danger-full-access' ? 'every session created from now on, after a restart too, runs with no fence' : 'sessions created from now on start with this preset',
        mode: value ?? '',
      })
    },
  }
}
