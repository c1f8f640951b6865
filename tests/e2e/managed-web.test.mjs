// The managed policy in the real DSH web UI, in a real headless Chromium:
// the card for a delete the policy asks about offers Deny and Allow once
// only, and the Approvals tab shows what the policy refused or asked with a
// badge of its own ("Managed"), folded in the browser by the core's web build.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup } from './harness.mjs'
import { loadPlaywright, makeWebWorld, missingWebPrerequisite, openBrowser, screenshotPath, startSession, startWeb } from './web-harness.mjs'

const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const SCRIPT = [
  bash('cat ~/secrets/key'),
  bash('rm -rf prod'),
  bash('cat ~/.ssh/id_ed25519'),
]

const { chromium, missing: noPlaywright } = await loadPlaywright()
const missing = missingWebPrerequisite() ?? noPlaywright

describe('the managed policy in the DSH web UI (headless Chromium)', { skip: missing }, () => {
  let world
  let web
  let browser
  let page
  before(async () => {
    world = makeWebWorld('managed-web', { script: SCRIPT, allowConfig: (w) => ({ managedFiles: [join(w.root, 'managed.json')] }) })
    writeFileSync(join(world.root, 'managed.json'), JSON.stringify({
      version: 1,
      deny: [{ path: '~/secrets', access: { read: true } }],
      ask: [{ path: join(world.ws, 'prod'), access: { delete: true } }],
    }))
    mkdirSync(join(world.home, 'secrets'), { recursive: true })
    writeFileSync(join(world.home, 'secrets', 'key'), 'MANAGED-SECRET\n')
    mkdirSync(join(world.ws, 'prod'), { recursive: true })
    web = await startWeb(world)
    browser = await openBrowser(chromium, world)
    page = browser.pages()[0] ?? await browser.newPage()
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`))
    await page.goto(`${web.url}/`)
  })
  after(async () => {
    await browser?.close()
    await web?.stop()
    if (world) cleanup(world)
  })

  test('the card for a delete the managed policy asks about offers Deny and Allow once only, and says why', async () => {
    await startSession(page, world, 'run the scripted steps')
    const card = page.locator('[data-dsh-allow=card]')
    await card.locator('[data-field=command]').filter({ hasText: 'rm -rf prod' }).waitFor({ timeout: 30_000 })
    assert.deepEqual(await card.locator('button').allInnerTexts(), ['Deny', 'Allow once'])
    assert.match(await card.locator('[data-field=why]').innerText(), /the managed policy asks every time before delete in prod \(.*managed\.json ask\[0\]\)/)
    await page.screenshot({ path: screenshotPath('managed-card.png') })
    await card.locator('[data-action=allow-once]').click()
    await page.getByText(/SCRIPT DONE \(3 results\)/).waitFor({ timeout: 30_000 })
    assert.equal(existsSync(join(world.ws, 'prod')), false, 'Allow once ran it')
  })

  test('the Approvals tab shows what the managed policy decided with its own badge', async () => {
    await page.getByText('Approvals', { exact: true }).click()
    const view = page.locator('[data-dsh-allow=approvals]')
    await view.locator('tr[data-call-id]').nth(2).waitFor({ timeout: 15_000 })
    const rows = await view.locator('tr[data-call-id]').evaluateAll((trs) => trs.map((tr) => ({
      command: tr.children[1].innerText, source: tr.dataset.source, outcome: tr.dataset.outcome,
      badge: tr.querySelector('.dsh-allow-badge').innerText, detail: tr.children[4].innerText,
    })))
    assert.deepEqual(rows.map((r) => [r.command, r.source, r.outcome, r.badge]), [
      ['cat ~/secrets/key', 'managed', 'refused', 'Managed'],
      ['rm -rf prod', 'human', 'allowed', 'Human'],
      ['cat ~/.ssh/id_ed25519', 'policy', 'refused', 'Policy'],
    ])
    assert.match(rows[0].detail, /the managed policy denies read on ~\/secrets for everyone/)
    // Its own badge: filled, in a colour no other source has.
    const look = (source) => view.locator(`tr[data-source=${source}] .dsh-allow-badge`).first()
      .evaluate((el) => { const s = getComputedStyle(el); return { bg: s.backgroundColor, fg: s.color } })
    const [managed, policy] = [await look('managed'), await look('policy')]
    assert.notDeepEqual(managed, policy)
    assert.notEqual(managed.bg, 'rgba(0, 0, 0, 0)', 'the managed badge is filled')
    await page.screenshot({ path: screenshotPath('managed-approvals.png') })
  })
})
