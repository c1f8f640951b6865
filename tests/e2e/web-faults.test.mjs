// What a person sees of a damaged name or an oversized command, in the real
// DSH web UI in headless Chromium: a path holding a newline and a
// right-to-left override is shown escaped on dsh-allow's card and in the
// Approvals tab (never split, never reordered), and a refused 1 MB command
// is a row holding its start and its size.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup } from './harness.mjs'
import { loadPlaywright, makeWebWorld, missingWebPrerequisite, openBrowser, screenshotPath, startSession, startWeb } from './web-harness.mjs'

const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const NAME = 'evil\nname\u202etxt.exe'
const BIG = `echo ${'y'.repeat(1024 * 1024)}`
const SCRIPT = [
  // The real characters, single-quoted: a newline and a right-to-left override.
  bash(`rm '${NAME}'`),
  bash(BIG),
]

const { chromium, missing: noPlaywright } = await loadPlaywright()
const missing = missingWebPrerequisite() ?? noPlaywright

describe('control characters and an oversized command in the DSH web UI (headless Chromium)', { skip: missing }, () => {
  let world
  let web
  let browser
  let page
  before(async () => {
    world = makeWebWorld('web-faults', { script: SCRIPT })
    writeFileSync(join(world.ws, NAME), 'x')
    web = await startWeb(world)
    browser = await openBrowser(chromium, world)
    page = browser.pages()[0] ?? await browser.newPage()
    await page.goto(`${web.url}/`)
  })
  after(async () => {
    await browser?.close()
    await web?.stop()
    if (world) cleanup(world)
  })

  test('the card shows the name escaped, on one line', async () => {
    await startSession(page, world, 'run the scripted steps')
    const card = page.locator('[data-dsh-allow=card]')
    await card.waitFor({ timeout: 30_000 })
    const path = await card.locator('[data-field=path]').innerText()
    assert.equal(path, 'evil\\nname\\u202etxt.exe')
    assert.equal(await card.locator('[data-field=command]').innerText(), "rm 'evil\\nname\\u202etxt.exe'")
    assert.ok(!(await card.locator('[data-field=why]').innerText()).includes('\n'))
    assert.equal(await card.locator('[data-field=path] [data-path]').getAttribute('title'), `Full path: ${join(world.ws, 'evil\\nname\\u202etxt.exe')}`)
    await page.screenshot({ path: screenshotPath('web-card-control-chars.png') })
    await card.locator('[data-action=deny]').click()
    await page.getByText(/SCRIPT DONE \(2 results\)/).waitFor({ timeout: 60_000 })
  })

  test('the Approvals tab shows the name escaped, and the 1 MB command cut with its size', async () => {
    await page.getByText('Approvals', { exact: true }).click()
    const view = page.locator('[data-dsh-allow=approvals]')
    await view.locator('tr[data-call-id]').nth(1).waitFor({ timeout: 15_000 })
    const rows = await view.locator('tr[data-call-id]').evaluateAll((trs) => trs.map((tr) => ({
      command: tr.children[1].innerText, outcome: tr.dataset.outcome, missing: tr.children[5].innerText,
    })))
    assert.equal(rows[0].missing, 'delete evil\\nname\\u202etxt.exe')
    assert.equal(rows[0].outcome, 'denied')
    assert.equal(rows[1].outcome, 'refused')
    assert.ok(rows[1].command.startsWith('echo yyy'))
    assert.ok(rows[1].command.length < 4200, `the row holds ${rows[1].command.length} characters`)
    assert.match(rows[1].command, new RegExp(`only the start is kept: the command was ${Buffer.byteLength(BIG)} bytes`))
    await page.screenshot({ path: screenshotPath('web-approvals-control-chars.png') })
  })
})
