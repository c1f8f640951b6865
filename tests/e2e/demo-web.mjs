// The demo's last step: the world the headless demo session ran in (its
// $DSH_HOME with the rules, the audit ledger and the stored session, its
// workspace, its fixture home) gets the web profile with dsh-allow installed,
// and a real `dsh web` is left running on it in the background, on a free
// loopback port. DSH's workspace registry adopts the sessions already stored
// under $DSH_HOME on its first start, so the demo session is listed in the
// sidebar and its Approvals tab shows the demo's decisions from the ledger.
// A headless Chromium then opens the printed URL, checks that the tab shows
// the demo's rows, and saves a screenshot.
//
// One demo server at a time: the server's pid, URL and world are recorded in
// demo-web.json beside the demo's world (test-output/, or the home cache when
// the checkout sits in a temp folder: harness.mjs testOutput), and the next demo stops that server (after
// checking the pid is still that `dsh web` in that world) and removes its
// world. `node tests/e2e/demo-web.mjs --stop` does only that.

import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DSH, envOf, testOutput } from './harness.mjs'
import { installWebProfile, loadPlaywright, missingWebPrerequisite, openBrowser, screenshotPath } from './web-harness.mjs'

/** Where the running demo server is recorded: beside the worlds, made on first use. */
export function statePath() {
  return join(testOutput(), 'demo-web.json')
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** Whether `pid` is still the `dsh web` the state file names (not a reused pid). */
function isDemoServer(state) {
  try {
    const cmdline = readFileSync(`/proc/${state.pid}/cmdline`, 'utf8').split('\0')
    const cwd = readlinkSync(`/proc/${state.pid}/cwd`)
    return cmdline.includes(DSH) && cmdline.includes('web') && cwd === join(state.root, 'ws')
  } catch {
    return false
  }
}

/** Stop the server a previous demo left running and remove its world. */
export async function stopPrevious({ quiet = false } = {}) {
  const STATE = statePath()
  if (!existsSync(STATE)) return false
  let state
  try {
    state = JSON.parse(readFileSync(STATE, 'utf8'))
  } catch {
    rmSync(STATE, { force: true })
    return false
  }
  let stopped = false
  if (Number.isInteger(state.pid) && alive(state.pid) && isDemoServer(state)) {
    // Its own session (setsid), so its process group is its pid.
    try { process.kill(-state.pid, 'SIGTERM') } catch { try { process.kill(state.pid, 'SIGTERM') } catch {} }
    for (let i = 0; i < 50 && alive(state.pid); i++) await sleep(100)
    if (alive(state.pid)) try { process.kill(-state.pid, 'SIGKILL') } catch {}
    stopped = true
    if (!quiet) console.log(`stopped the previous demo server (pid ${state.pid}, ${state.url})`)
  }
  // Only ever a demo world under test-output/.
  if (typeof state.root === 'string' && dirname(state.root) === testOutput() && basename(state.root).startsWith('e2e-demo-')) {
    rmSync(state.root, { recursive: true, force: true })
  }
  rmSync(STATE, { force: true })
  return stopped
}

/**
 * `dsh --profile web --no-open --port 0` under nohup in a session of its own
 * (it outlives the demo), output to a log in the world; resolves once it
 * prints its URL. Port 0: the kernel picks a free port, so an older server
 * never stands in the way.
 */
export async function startDetached(world, { timeoutMs = 60_000 } = {}) {
  const log = join(world.root, 'dsh-web.log')
  const fd = openSync(log, 'a')
  const child = spawn('nohup', [DSH, '--profile', 'web', '--no-open', '--port', '0'], {
    cwd: world.ws, env: envOf(world), stdio: ['ignore', fd, fd], detached: true,
  })
  closeSync(fd)
  child.unref()
  let exited
  child.on('exit', (code, signal) => { exited = code ?? signal })
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const m = /dsh web: (http:\/\/\S+)/.exec(readFileSync(log, 'utf8'))
    if (m) return { pid: child.pid, url: m[1].replace(/\/?$/, '/'), log }
    if (exited !== undefined) break
    await sleep(100)
  }
  if (exited === undefined) try { process.kill(-child.pid, 'SIGTERM') } catch {}
  throw new Error(`dsh web ${exited === undefined ? 'did not print its URL in time' : `exited (${exited})`}:\n${readFileSync(log, 'utf8')}`)
}

/**
 * What a person does: open the URL, pick the demo session in the sidebar,
 * open Approvals, show the default allows. Returns the rows shown.
 */
export async function checkApprovals(url, world, { expectedRows = 1, screenshot = 'demo-approvals.png', timeoutMs = 20_000 } = {}) {
  const { chromium, missing } = await loadPlaywright()
  if (missing) return { skipped: missing }
  const browser = await openBrowser(chromium, world)
  try {
    const page = browser.pages()[0] ?? await browser.newPage()
    await page.goto(url)
    const notice = page.getByRole('button', { name: 'Continue', exact: true })
    await notice.waitFor({ timeout: 15_000 }).then(() => notice.click(), () => {})
    await notice.waitFor({ state: 'hidden' })
    // The stored session: a sidebar row with a time (the draft "New Session" has none).
    const session = page.locator('[role=treeitem]').filter({ has: page.locator('[class*=_time]') }).first()
    await session.waitFor({ timeout: timeoutMs })
    await session.click()
    await page.getByText('Approvals', { exact: true }).click()
    const view = page.locator('[data-dsh-allow=approvals]')
    await view.locator('tr[data-call-id]').first().waitFor({ timeout: timeoutMs })
    await view.locator('[data-dsh-allow=show-baseline]').check()
    const rows = async () => view.locator('tr[data-call-id]').evaluateAll((trs) => trs.map((tr) => ({
      command: tr.children[1].innerText, source: tr.dataset.source, outcome: tr.dataset.outcome,
    })))
    let shown = await rows()
    for (let i = 0; i < 20 && shown.length < expectedRows; i++) {
      await sleep(250)
      shown = await rows()
    }
    const path = screenshotPath(screenshot)
    await page.screenshot({ path, fullPage: true })
    return { rows: shown, screenshot: path }
  } finally {
    await browser.close()
  }
}

/**
 * Serve the demo world and print how to reach and stop it. `commands` are
 * the demo's commands, each of which must show up as a row.
 */
export async function serveDemo(world, { commands }) {
  await stopPrevious()
  installWebProfile(world)
  const server = await startDetached(world)
  mkdirSync(testOutput(), { recursive: true })
  writeFileSync(statePath(), `${JSON.stringify({ pid: server.pid, url: server.url, root: world.root, log: server.log, startedAt: new Date().toISOString() }, null, 2)}\n`)

  let check
  const missing = missingWebPrerequisite()
  if (missing) {
    check = { skipped: missing }
  } else {
    check = await checkApprovals(server.url, world, { expectedRows: commands.length }).catch((error) => ({ error }))
  }

  console.log('\n== The DSH web UI on the demo world (left running) ==')
  console.log(`URL:        ${server.url}`)
  console.log(`PID:        ${server.pid}   (log: ${server.log})`)
  console.log(`Open it, pick the demo session under workspace "${basename(world.ws)}" in the sidebar, then the Approvals tab`)
  console.log('(tick "Show default allows" to see the baseline rows too).')
  console.log(`Stop it:    kill ${server.pid}    (or: bash scripts/demo.sh --stop, which also removes ${world.root})`)

  if (check.skipped) {
    console.log(`Browser check skipped: ${check.skipped}`)
    return true
  }
  if (check.error) {
    console.error(`demo: the Approvals tab check in headless Chromium failed: ${check.error.message}`)
    return false
  }
  const shownCommands = new Set(check.rows.map((r) => r.command))
  const absent = commands.filter((c) => !shownCommands.has(c))
  console.log(`Checked in headless Chromium: the Approvals tab shows ${check.rows.length} rows (${summary(check.rows)}); screenshot ${check.screenshot}`)
  if (absent.length > 0) {
    console.error(`demo: the Approvals tab is missing ${absent.length} of the demo's commands: ${absent.join(' | ')}`)
    return false
  }
  return true
}

function summary(rows) {
  const counts = new Map()
  for (const r of rows) counts.set(r.source, (counts.get(r.source) ?? 0) + 1)
  return [...counts].map(([source, n]) => `${n} ${source}`).join(', ')
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--stop')) {
  if (!(await stopPrevious())) console.log('no demo server is running')
}
