// Our side of DSH's approval service. DSH's outcomes are only
// `allowed-once | rejected | cancelled | unavailable`; "Always allow" is ours.
//
// The listener is prepended on `approval/request` and claims only the
// requests this plugin raised (same call id and the exact reason we gave);
// everything else — including a `sandbox_permissions` escalation of the very
// same call — passes on untouched, so no rule ever answers an escalation.
// For a claimed request the optional auto-reviewer speaks first, then the
// answerers after us (the web card, a test answerer); we turn `allowed-once`
// into the one-shot grant bound to that call, whoever gave it.

import { onceRules } from './grants.js'

/** The prompts this plugin raised, by call id, until they settle. */
export class Asks {
  constructor() {
    this.byCall = new Map()
  }

  add(ask) {
    this.byCall.set(ask.callId, { ...ask, state: 'raised', always: undefined })
  }

  get(callId) {
    return this.byCall.get(callId)
  }

  list(sessionId) {
    return [...this.byCall.values()].filter((a) => sessionId === undefined || a.sessionId === sessionId)
  }

  /** Claim an approval request if it is the one we raised (once). */
  claim(callId, reason) {
    const ask = this.byCall.get(callId)
    if (ask === undefined || ask.state !== 'raised' || ask.reason !== reason) return undefined
    ask.state = 'asking'
    return ask
  }

  drop(callId) {
    this.byCall.delete(callId)
  }
}

export function approvalListener({ asks, grants, ledger, review }) {
  return async (req, next) => {
    const ask = asks.claim(req.callId, req.reason)
    if (ask === undefined) return next()
    let outcome = 'unavailable'
    let human = true
    try {
      // The optional auto-reviewer (review.js) answers first: its ALLOW is an
      // `allowed-once` that never reaches the card; anything else falls
      // through to the answerers, unless the call was cancelled meanwhile.
      // Never where the managed policy asks, or turns the reviewer off: a person answers.
      const verdict = review === undefined || ask.autoReview === false ? undefined : await review(ask, req)
      if (verdict !== undefined && req.signal?.aborted) {
        outcome = 'cancelled'
      } else if (verdict === 'ALLOW') {
        outcome = 'allowed-once'
        human = false
      } else {
        outcome = await next()
      }
    } finally {
      ask.state = 'answered'
      // A command grant that matched still carries its roots into the profile.
      if (outcome === 'allowed-once') grants.bind(ask.callId, [...(ask.carried ?? []), ...onceRules(ask.callId, ask.proposals, new Date().toISOString())], ask.folders ?? [], ask.kept ?? [])
      else grants.release(ask.callId)
      if (human) {
        ledger.append({
          kind: 'human', time: new Date().toISOString(), sessionId: ask.sessionId, callId: ask.callId,
          tool: req.toolName, command: ask.command, outcome, always: ask.always,
          // Allowed once, the kernel carries this wider than the card's paths (said on the card).
          widened: outcome === 'allowed-once' && ask.widened?.length ? ask.widened : undefined,
        })
      }
    }
    return outcome
  }
}

/**
 * Fold the proposals a prompt named into the stored rules: a rule for the
 * same path and shape gains the capabilities, otherwise a new rule is added.
 * Nothing wider than the proposal (never its parent folder) is written.
 */
export function withProposals(rules, proposals, newId, createdAt) {
  const out = rules.map((r) => ({ ...r, access: { ...r.access } }))
  const stored = []
  for (const p of proposals) {
    const granted = Object.fromEntries(Object.entries(p.access ?? {}).filter(([, v]) => v === true))
    if (Object.keys(granted).length === 0) continue
    let rule = out.find((r) => r.path === p.path && r.recursive === p.recursive)
    if (rule === undefined) {
      rule = { id: newId(), path: p.path, recursive: p.recursive, access: {}, hits: 0, createdAt }
      out.push(rule)
    }
    Object.assign(rule.access, granted)
    if (!stored.includes(rule)) stored.push(rule)
  }
  return { rules: out, stored }
}
