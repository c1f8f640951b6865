// The real DSH web host (`dsh web`) with dsh-allow installed into the web
// profile the way a user installs it, a scripted model, and a real headless
// Chromium driven by playwright-core (the system /usr/bin/chromium; nothing
// is downloaded). The human here is the test, clicking in the page.

import { spawn } from 'node:child_process'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DSH, PKG, REPO, envOf, missingPrerequisite, testOutput } from './harness.mjs'

export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
]
export const SCREENSHOTS = join(REPO, 'test-output', 'screenshots')
const PLUGINS = join(dirname(fileURLToPath(import.meta.url)), 'plugins')

/** playwright-core, or the reason it cannot be had. */
export async function loadPlaywright() {
  try {
    return { chromium: (await import('playwright-core')).chromium }
  } catch (error) {
    return { missing: `playwright-core is not installed (scripts/setup-dsh.sh): ${error.message}` }
  }
}

export function missingWebPrerequisite() {
  return missingPrerequisite() ?? (existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (scripts/setup.sh)`)
}

/**
 * A fresh world for the web profile: workspace, fixture home, $DSH_HOME with
 * the web profile materialized, dsh-allow and the scripted model inserted.
 */
export function makeWebWorld(label, { script = [], allowConfig } = {}) {
  const base = testOutput()
  mkdirSync(base, { recursive: true })
  const root = mkdtempSync(join(base, `e2e-${label}-`))
  const world = { root, ws: join(root, 'ws'), home: join(root, 'home'), dshHome: join(root, 'dsh') }
  world.profile = join(world.dshHome, 'profiles', 'web')
  world.rulesFile = join(world.dshHome, 'dsh-allow.json')
  world.auditFile = join(world.dshHome, 'dsh-allow-audit.ndjson')
  mkdirSync(world.ws, { recursive: true })
  mkdirSync(join(world.home, '.ssh'), { recursive: true })
  writeFileSync(join(world.home, '.ssh', 'id_ed25519'), '-----BEGIN OPENSSH PRIVATE KEY-----\nfixture\n-----END OPENSSH PRIVATE KEY-----\n')
  writeFileSync(join(world.ws, 'README.md'), '# fixture workspace\n')
  installWebProfile(world, { script, allowConfig })
  return world
}

/**
 * Materialize the web profile in `world.dshHome` and install dsh-allow and
 * the scripted model into it (the demo also uses this on its headless world,
 * so both profiles share one $DSH_HOME: rules, ledger and sessions).
 */
export function installWebProfile(world, { script = [], allowConfig } = {}) {
  const profile = join(world.dshHome, 'profiles', 'web')
  const made = spawnSync(DSH, ['--profile', 'web', '--dump-config'], { cwd: world.ws, env: envOf(world), encoding: 'utf8' })
  if (made.status !== 0) throw new Error(`dsh could not create the web profile: ${made.stderr}`)
  const installed = join(profile, 'node_modules', 'dsh-allow')
  cpSync(PKG, installed, { recursive: true, dereference: true })
  // The plugin and the client bundle from the working tree (build.sh copies both verbatim).
  cpSync(join(REPO, 'plugin'), join(installed, 'plugin'), { recursive: true })
  if (existsSync(join(REPO, 'client', 'client.js'))) cpSync(join(REPO, 'client', 'client.js'), join(installed, 'client', 'client.js'))
  cpSync(PLUGINS, join(profile, 'e2e-plugins'), { recursive: true })
  writeFileSync(join(profile, 'cordis.patch.yml'), [
    '- id: agent-default-model',
    '  config: { provider: stub, model: stub-1 }',
    '- insert:',
    '    - id: dsh-allow',
    '      name: dsh-allow',
    // A function of the world for a config naming paths inside it.
    ...(allowConfig ? [`      config: ${JSON.stringify(typeof allowConfig === 'function' ? allowConfig(world) : allowConfig)}`] : []),
    '    - id: e2e-scripted-model',
    `      name: ${JSON.stringify(join(profile, 'e2e-plugins', 'scripted-model.js'))}`,
    `      config: ${JSON.stringify({ script })}`,
    '',
  ].join('\n'))
}

/** `dsh web --no-open --port 0` in its own process group; resolves with its URL. */
export function startWeb(world, { timeoutMs = 60_000 } = {}) {
  const child = spawn(DSH, ['--profile', 'web', '--no-open', '--port', '0'], {
    cwd: world.ws, env: envOf(world), stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  })
  let stdout = ''
  let stderr = ''
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    try { process.kill(-child.pid, 'SIGTERM') } catch {}
    const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL') } catch {} }, 5000)
    await exited
    clearTimeout(timer)
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop()
      reject(new Error(`dsh web did not print its URL in ${timeoutMs} ms\n${stdout}\n${stderr}`))
    }, timeoutMs)
    child.stdout.on('data', (b) => {
      stdout += b
      const m = /dsh web: (http:\/\/\S+)/.exec(stdout)
      if (m) {
        clearTimeout(timer)
        resolve({ url: m[1].replace(/\/$/, ''), stop, log: () => ({ stdout, stderr }) })
      }
    })
    child.stderr.on('data', (b) => { stderr += b })
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`dsh web exited (${code}) before serving\n${stdout}\n${stderr}`))
    })
  })
}

/** A headless Chromium with a new user-data-dir of its own. */
export async function openBrowser(chromium, world) {
  const userDataDir = mkdtempSync(join(world.root, 'chromium-'))
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
    locale: 'en-US',
  })
}

/** Dismiss the first-run notice, open the workspace and send one prompt. */
export async function startSession(page, world, prompt) {
  const notice = page.getByRole('button', { name: 'Continue' })
  await notice.waitFor({ timeout: 15_000 }).then(() => notice.click(), () => {})
  await page.getByText('Choose workspace').click()
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('button', { name: 'Edit path' }).click()
  await page.keyboard.press('Control+A')
  await page.keyboard.type(world.ws)
  await page.keyboard.press('Enter')
  await dialog.getByRole('button', { name: 'Open' }).click()
  const input = page.getByPlaceholder('Describe what you want to build')
  await input.fill(prompt)
  await page.keyboard.press('Enter')
}

export function screenshotPath(name) {
  mkdirSync(SCREENSHOTS, { recursive: true })
  return join(SCREENSHOTS, name)
}
