// One-shot ("allow once") grants and the per-session turn that keeps them
// from leaking sideways.
//
// A grant is bound to exactly one tool call: the decision sees it only for
// that call id, and the kernel profile picks it up only for that call's
// command line in that session (confine gets no call id, so the command line
// re-identifies the call). While a call holds its session's turn — from the
// moment it asks until its result settles — every other call of the same
// session waits before it is decided, so two overlapping calls can never
// share one grant. `tools/post-execute` releases it; the TTL is a backstop
// for calls that never reach a result.

export class GrantStore {
  /** @param {{ ttlMs: number }} options */
  constructor({ ttlMs }) {
    this.ttlMs = ttlMs
    /** sessionId → the call holding that session's turn */
    this.holders = new Map()
    /** callId → that call's slot */
    this.slots = new Map()
  }

  /**
   * Take this session's turn: wait until no other call holds it, then hold it
   * (the check and the take happen in one synchronous step, so two waiters
   * woken together cannot both get it). A call that goes on to ask keeps it
   * with `hold()`; any other call gives it back with `release()` right after
   * its decision. Returns early, without the turn, if the signal aborts.
   */
  async turn(sessionId, callId, signal) {
    for (;;) {
      const slot = this.holders.get(sessionId)
      if (slot === undefined) {
        this.take(sessionId, callId)
        return true
      }
      if (slot.callId === callId) return true
      if (signal?.aborted) return false
      await (signal === undefined ? slot.settled : Promise.race([slot.settled, aborted(signal)]))
    }
  }

  take(sessionId, callId) {
    let settle
    const settled = new Promise((resolve) => { settle = resolve })
    const slot = { sessionId, callId, command: undefined, rules: [], folders: [], kept: [], claimed: false, settled, settle, timer: undefined }
    this.holders.set(sessionId, slot)
    this.slots.set(callId, slot)
    return slot
  }

  /**
   * Keep the turn for a call that asks: it now waits for a human, so the TTL
   * backstop starts, and the command line is what the profile will match.
   */
  hold(sessionId, callId, command) {
    const slot = this.slots.get(callId) ?? (this.holders.has(sessionId) ? undefined : this.take(sessionId, callId))
    if (slot === undefined || slot.sessionId !== sessionId) {
      throw new Error(`dsh-allow: call ${callId} does not hold session ${sessionId}`)
    }
    slot.command = command
    clearTimeout(slot.timer)
    slot.timer = setTimeout(() => this.release(callId), this.ttlMs)
    slot.timer.unref?.()
    return slot
  }

  /**
   * Attach the approved one-shot rules to the call that holds its session,
   * the folders its line makes (the decision's `folders`: the runner makes
   * those outside the workspace before the fence) and the files whose
   * content the runner keeps before the call replaces them (`kept`).
   */
  bind(callId, rules, folders = [], kept = []) {
    const slot = this.slots.get(callId)
    if (slot === undefined) return false
    slot.rules = rules
    slot.folders = folders
    slot.kept = kept
    return true
  }

  /** The one-shot rules the decision may see for this call (and no other). */
  forCall(callId) {
    return this.slots.get(callId)?.rules ?? []
  }

  /**
   * The one-shot rules for the profile of a confined run, found by session
   * and exact command line. Claimed once: a second run of the same line in
   * the same session (which the turn forbids anyway) gets nothing.
   */
  claim(sessionId, command) {
    return this.claimCall(sessionId, command).rules
  }

  /** `claim`, with the folders the call's line makes and the files it keeps: `{ rules, folders, kept }`. */
  claimCall(sessionId, command) {
    const slot = this.holders.get(sessionId)
    const none = { rules: [], folders: [], kept: [] }
    if (slot === undefined || slot.claimed || slot.command !== command) return none
    if (slot.rules.length === 0 && slot.folders.length === 0 && slot.kept.length === 0) return none
    slot.claimed = true
    return { rules: slot.rules, folders: slot.folders, kept: slot.kept }
  }

  isHeld(sessionId) {
    return this.holders.has(sessionId)
  }

  /** Drop the call's grant and give its session's turn back. Idempotent. */
  release(callId) {
    const slot = this.slots.get(callId)
    if (slot === undefined) return false
    clearTimeout(slot.timer)
    this.slots.delete(callId)
    if (this.holders.get(slot.sessionId) === slot) this.holders.delete(slot.sessionId)
    slot.settle()
    return true
  }

  /** Release everything (plugin disposal): no waiter is left hanging. */
  clear() {
    for (const callId of [...this.slots.keys()]) this.release(callId)
  }
}

function aborted(signal) {
  return new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
}

/** The one-shot rules "Allow once" binds: exactly the proposals the prompt named. */
export function onceRules(callId, proposals, createdAt) {
  return proposals.map((p, i) => ({
    id: `once-${callId}-${i + 1}`,
    path: p.path,
    recursive: p.recursive,
    access: { ...p.access },
    hits: 0,
    createdAt,
  }))
}
