// The plugin's only door to the decision core (Rust compiled to wasm).
//
// Installed as the `dsh-allow` package, the core is the package's own
// `./core` export; inside a bare pkg/ tree (no package resolution) it sits
// beside this folder. Every policy answer comes from here: the plugin adds
// file I/O, probing and host wiring, never policy of its own.

async function load() {
  try {
    return await import('dsh-allow/core')
  } catch (byName) {
    const code = byName?.code
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw byName
    try {
      return await import('../core/index.js')
    } catch (byPath) {
      throw new Error(`dsh-allow: the decision core is missing (tried 'dsh-allow/core': ${byName.message}; '../core/index.js': ${byPath.message}). Build it with scripts/build.sh.`)
    }
  }
}

const core = await load()

export const decide = core.decide
/** The file system as the core's host (real paths, kinds, PATH), with its
 * caches; `invalidate()` after a tool call forgets the folders it resolved. */
export const nodeHost = core.nodeHost
export const invalidate = core.invalidate
export const parseRules = core.parseRules
/** The managed policy (src/policy/managed.rs): its files merged, described, and where the system one lives. */
export const managedPolicy = core.managedPolicy
export const describeManaged = core.describeManaged
export const managedSystemFile = core.managedSystemFile
/** `managedRuleCheck(policy, rule, home, platform) -> {refused?, notes}`: may /allow add store this rule. */
export const managedRuleCheck = core.managedRuleCheck
export const renderRules = core.renderRules
/** `workspaceRefusal(workspace, home) -> string | undefined`: why a session's workspace is not one (`/`, above home). */
export const workspaceRefusal = core.workspaceRefusal
export const newRuleId = core.newRuleId
export const version = core.version
/** `commandGrantPrompt(commands) -> string`: the model's prompt section for the command grants ('' for none). */
export const commandGrantPrompt = core.commandGrantPrompt
/** `compileProfile(request, host?) -> {plan, sbpl: {text, params}}`: the fence plan and its Seatbelt profile. */
export const compileProfile = core.compileProfile
/** Ledger folding and redaction (src/ledger.rs). */
export const foldLedger = core.foldLedger
export const foldLedgerJson = core.foldLedgerJson
export const redact = core.redact
/** `explainDenials(stderr, cwd, home) -> [{path, capability?, guidance}]`: kernel denials as guidance. */
export const explainDenials = core.explainDenials
/** `withheldAt(plan, realPath) -> capability[]`: what a compiled fence refuses there. */
export const withheldAt = core.withheldAt
/** The optional auto-reviewer's input, instructions and answer reading (src/review.rs). */
export const buildReviewInput = core.buildReviewInput
export const reviewSystemPrompt = core.reviewSystemPrompt
export const parseReviewAnswer = core.parseReviewAnswer
