// Stands in for the `dsh-allow` host row in benches/host.mjs's cold-start
// sessions: loads the installed plugin in the host process and times what a
// user waits for before the first call can be decided — the import of the
// plugin's module graph (the plugin, the core's wasm, compiled on load), its
// apply(), and the first decision this process makes (a fresh parser, the
// policy prepared from nothing, PATH looked up). The figures go to
// $DSH_ALLOW_BENCH_OUT; everything else is the plugin's own.

import { appendFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

// The installed package's plugin/index.js (the host would import it by name).
const entry = process.env.DSH_ALLOW_BENCH_PLUGIN
const importStartMs = performance.now()
const plugin = await import(pathToFileURL(entry).href)
const loadMs = performance.now() - importStartMs
// Already evaluated by the plugin's own import: the same module instance.
const core = await import(pathToFileURL(join(dirname(entry), '..', 'core', 'index.js')).href)

export const name = plugin.name
export const inject = plugin.inject
export const Config = plugin.Config

export function apply(ctx, config) {
  const applyStart = performance.now()
  plugin.apply(ctx, config)
  const applyMs = performance.now() - applyStart
  const dshHome = process.env.DSH_HOME
  const workspace = process.cwd()
  const decideStart = performance.now()
  const decision = core.decide({
    command: 'cat README.md && git status',
    cwd: workspace,
    workspace,
    home: homedir(),
    harnessHome: dshHome,
    platform: 'linux',
    mode: 'workspace-write',
    rules: [],
    grants: [],
    protectedFiles: ['dsh-allow.json', 'dsh-allow-audit.ndjson', 'dsh-allow-fence'].map((f) => join(dshHome, f)),
    fence: ['read', 'write', 'create', 'delete', 'execute'],
  })
  const decideMs = performance.now() - decideStart
  appendFileSync(process.env.DSH_ALLOW_BENCH_OUT, `${JSON.stringify({
    kind: 'cold', importStartMs, loadMs, applyMs, decideMs, decision: decision.decision,
  })}\n`)
}
