// The plugin's configuration schema (a `dsh-allow` host row's `config:`).
// Schemastery names the offending key in every error ("$.enforce expected …").

import z from '@deepseek-ai/schemastery'
import { dshHomePath, expandHomePath } from '@deepseek-ai/dsh-home-paths'

export const ENFORCE_LEVELS = ['auto', 'full', 'guarded', 'process', 'writes', 'off']
/** What testPlatform takes: the platforms the plugin has a fence for, by the core's names. */
export const TEST_PLATFORMS = ['linux', 'macos']

const Access = z.object({
  read: z.boolean(),
  write: z.boolean(),
  create: z.boolean(),
  delete: z.boolean(),
  execute: z.boolean(),
})

/** A deployment grant has the shape of a stored rule. */
const Grant = z.object({
  path: z.string().required().description('Absolute path (or ~/…).'),
  recursive: z.boolean().default(true),
  access: Access.required(),
})

export const Config = z.object({
  rulesFile: z.string().description('Stored rules. Default: $DSH_HOME/dsh-allow.json.'),
  auditFile: z.string().description('Audit ledger. Default: $DSH_HOME/dsh-allow-audit.ndjson.'),
  audit: z.boolean().default(true).description('false turns the audit ledger off.'),
  auditFailure: z.union(['refuse', 'warn']).default('refuse').description('A call whose ledger record cannot be written: refuse (it does not run; the result names the file) or warn (it runs, and its result and /allow status carry the warning).'),
  promptHint: z.boolean().default(true).description('false: no system-prompt section telling the model which command grants exist and which spellings pass.'),
  sessionGrantTtlMs: z.natural().min(1).default(600000).description('Backstop lifetime of an "allow once" grant.'),
  enforce: z.union(ENFORCE_LEVELS).default('auto').description('Required kernel fence level; auto takes the strongest that probes.'),
  grants: z.array(Grant).default([]).description('Deployment grants, same shape as a stored rule.'),
  managedFiles: z.array(z.string().pattern(/^\//)).default([]).description('Further managed policy files (absolute paths), read beside the administrator\'s system file (/etc/dsh-allow/managed.json; on macOS /Library/Application Support/dsh-allow/managed.json), never in its place. They only tighten.'),
  runner: z.string().description('The native `dsh-allow` runner. Default: the one shipped in this package.'),
  fenceCache: z.string().description('Where the Linux runner keeps compiled fences (a protected folder; "" turns it off). Default: $DSH_HOME/dsh-allow-fence.'),
  // Test hooks: the macOS path run where there is no Mac (the Seatbelt model
  // on Linux, tests/seatbelt_model). Never set them in a user's profile.
  testPlatform: z.union(TEST_PLATFORMS).description('Test hook: take this platform\'s path (baseline, fence) instead of the one Node runs on.'),
  sandboxExec: z.string().pattern(/^\//).description('Test hook: an absolute path run in place of /usr/bin/sandbox-exec. Needs testPlatform: macos.'),
  autoReview: z.object({
    enabled: z.boolean().default(false).description('Off: the card stays in charge of every prompt.'),
    timeoutMs: z.natural().default(10000).description('A reviewer slower than this is an ASK.'),
    provider: z.string().description('Default: the session\'s latest model route. Set together with model.'),
    model: z.string().description('Default: the session\'s latest model route. Set together with provider.'),
  }).default({}).description('Optional: the session\'s model may answer "allow once" for a narrow request the user just asked for.'),
})

/**
 * Apply path defaults and expansions to a validated config. Throws on a
 * combination the schema cannot see: a stand-in for sandbox-exec is only
 * ever run on the macOS path a test asked for.
 */
export function resolveConfig(config) {
  if (config.sandboxExec !== undefined && config.testPlatform !== 'macos') {
    throw new Error(`dsh-allow: sandboxExec (${config.sandboxExec}) is a test hook for the macOS path and needs testPlatform: macos; macOS itself runs only /usr/bin/sandbox-exec`)
  }
  const file = (value, fallback) => expandHomePath(value ?? dshHomePath(fallback))
  let n = 0
  return {
    ...config,
    rulesFile: file(config.rulesFile, 'dsh-allow.json'),
    auditFile: file(config.auditFile, 'dsh-allow-audit.ndjson'),
    fenceCache: config.fenceCache === '' ? undefined : file(config.fenceCache, 'dsh-allow-fence'),
    grants: (config.grants ?? []).map((g) => ({
      id: `config-${++n}`,
      path: expandHomePath(g.path),
      recursive: g.recursive ?? true,
      access: pickAccess(g.access),
      hits: 0,
      createdAt: '',
    })),
  }
}

function pickAccess(access) {
  const out = {}
  for (const [k, v] of Object.entries(access ?? {})) if (typeof v === 'boolean') out[k] = v
  return out
}
