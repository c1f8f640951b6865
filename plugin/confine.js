// The kernel half: `ctx.sandbox.confine` wrapped in place, never replaced.
//
// For a confined bash run we hand back our own argv — Linux: the native
// `dsh-allow run` runner with the profile JSON; macOS: `/usr/bin/sandbox-exec`
// with the Seatbelt profile compiled by the core — in the provider's result
// shape. Everything else (other platforms, a fence that is off, argv we did
// not expect) goes to the provider that was registered before us. Under
// danger-full-access DSH never calls confine at all; the gate still applies.

import { RUNNER_FAILURE_EXITS, RUNNER_FAILURE_PREFIX, SEATBELT_FAILURE_PREFIX, runnerArgv, seatbeltArgv } from './fence.js'
import { withoutVariables } from './launch.js'

export { seatbeltArgv }

/**
 * Wrap `sandbox.confine`. `plan(argv, policy)` returns our ConfinedArgv or
 * undefined to delegate. Returns the disposer that restores the original.
 */
export function wrapConfine(sandbox, plan) {
  const hadOwn = Object.hasOwn(sandbox, 'confine')
  const original = sandbox.confine
  const wrapped = function confine(argv, policy) {
    const ours = plan(argv, policy)
    return ours ?? original.call(this, argv, policy)
  }
  sandbox.confine = wrapped
  return () => {
    if (sandbox.confine !== wrapped) return
    if (hadOwn) sandbox.confine = original
    else delete sandbox.confine
  }
}

/**
 * The planner: decides whether a confine call is ours and builds the argv.
 * `profileFor(policy, command)` builds the core's profile request (rules,
 * grants incl. a claimed one-shot grant, protected files); on macOS
 * `compileProfile(request, host)` is the core's compiler and `host` answers
 * its real-path questions.
 */
export function makePlanner({ platform, fence, runner, fenceCache, profiles, profileFor, compileProfile, host, sandboxExec, unset = [] }) {
  return (given, policy) => {
    // What the host took from the workspace's `.env` and names code goes
    // first (launch.js); `given` is DSH's own argv, judged below.
    const argv = withoutVariables(given, unset)
    const status = fence.current()
    if (status === undefined || status.level === 'off') return undefined
    if (policy?.mode !== 'read-only' && policy?.mode !== 'workspace-write') return undefined
    const command = given.length === 3 && given[0] === 'bash' && given[1] === '-c' ? given[2] : undefined
    const profile = profileFor(policy, command, status.level)
    if (platform === 'linux') {
      return {
        // By file (profiles.js): one argument caps at 128 KiB, ~1,000 rules.
        argv: runnerArgv(runner, profile, argv, { fenceCache, profileFile: profiles?.forProfile(profile) }),
        enforcement: status.enforcement === 'full' ? 'full' : 'partial',
        // None: the gate's tools/post-execute reads the kernel's refusals
        // itself (which path, which capability, what grants it) and marks
        // the call an error. With signatures DSH would flag any failing
        // command whose stderr says "permission denied" and tell the model to
        // retry under a wider sandbox mode, which is not the remedy.
        denialSignatures: [],
        runnerFailureRules: [{ allowedExitCodes: RUNNER_FAILURE_EXITS, fatalSignatures: [RUNNER_FAILURE_PREFIX] }],
      }
    }
    if (platform === 'macos') {
      // The fence is up and the gate decided by it: a profile that cannot be
      // compiled is reported by throwing, never replaced by a wider one (nor
      // by the host's own provider).
      if (typeof compileProfile !== 'function') throw new Error('dsh-allow: the Seatbelt fence is up but the core has no compileProfile; nothing ran')
      const { sbpl } = compileProfile(profile, host)
      return {
        argv: seatbeltArgv(sbpl, argv, { sandboxExec }),
        enforcement: status.enforcement === 'full' ? 'full' : 'partial',
        // None, as on Linux: the gate names Seatbelt's EPERM refusals itself.
        denialSignatures: [],
        // sandbox-exec names itself when it cannot parse or apply the profile.
        runnerFailureRules: [{ fatalSignatures: [SEATBELT_FAILURE_PREFIX] }],
      }
    }
    return undefined
  }
}
