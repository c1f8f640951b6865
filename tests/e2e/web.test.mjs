// dsh-allow in the real DSH web UI, in a real headless Chromium: the card
// for `rm -rf build` names the operation and the path, Always allow stores
// the narrowest rule and the command runs, and the Approvals tab shows one
// row per call with who decided it (the baseline hidden until asked for),
// folded in the browser by the core's web build.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup } from './harness.mjs'
import { loadPlaywright, makeWebWorld, missingWebPrerequisite, openBrowser, screenshotPath, startSession, startWeb } from './web-harness.mjs'

const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const SCRIPT = [
  bash('cat README.md'),
  bash('rm -rf build'),
  bash('mkdir build && rm -rf build'),
  bash('cat ~/.ssh/id_ed25519'),
  // The spec's third line: inline code is left to the kernel, which refuses the read.
  bash(`python3 -c 'import os; print(open(os.path.expanduser("~/.ssh/id_ed25519")).read())'`),
]

const { chromium, missing: noPlaywright } = await loadPlaywright()
const missing = missingWebPrerequisite() ?? noPlaywright

describe('dsh-allow in the DSH web UI (headless Chromium)', { skip: missing }, () => {
  let world
  let web
  let browser
  let page
  before(async () => {
    world = makeWebWorld('web', { script: SCRIPT })
    mkdirSync(join(world.ws, 'build', 'obj'), { recursive: true })
    writeFileSync(join(world.ws, 'build', 'obj', 'main.o'), 'x')
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

  test('the card for rm -rf build names the operation and the path; Always allow stores the narrowest rule and the command runs', async () => {
    await startSession(page, world, 'run the scripted steps')
    const card = page.locator('[data-dsh-allow=card]')
    await card.waitFor({ timeout: 30_000 })
    await card.locator('[data-field=command]').filter({ hasText: 'rm -rf build' }).waitFor()
    assert.equal(await card.getByText('Filesystem permission required').count(), 1)
    assert.equal(await card.locator('[data-field=operation]').innerText(), 'delete')
    // Paths as a person reads them: relative to the workspace, in full on hover.
    assert.equal(await card.locator('[data-field=path]').innerText(), 'build')
    assert.equal(await card.locator('[data-field=path] [data-path]').getAttribute('title'), `Full path: ${join(world.ws, 'build')}`)
    assert.equal(await card.locator('[data-field=sandbox]').innerText(), 'workspace-write')
    // The decision's reason, its paths read the same way.
    assert.match(await card.locator('[data-field=why]').innerText(), /delete is not granted on build\b/)
    assert.doesNotMatch(await card.locator('[data-field=why]').innerText(), new RegExp(world.ws.replaceAll('.', '\\.')))
    const always = card.locator('[data-action=always-allow]')
    assert.equal(await always.innerText(), 'Always allow: delete build/**')
    assert.equal(await always.getAttribute('title'), `Full path: ${join(world.ws, 'build')}`)
    assert.deepEqual(await card.locator('button').allInnerTexts(), ['Deny', 'Always allow: delete build/**', 'Allow once'])
    assert.equal(await page.getByText('Reject', { exact: true }).count(), 0, 'DSH\'s own card is not shown for our prompt')
    await page.screenshot({ path: screenshotPath('web-card.png') })

    await always.click()
    await page.getByText(/SCRIPT DONE \(5 results\)/).waitFor({ timeout: 30_000 })
    await page.screenshot({ path: screenshotPath('web-chat-after-always-allow.png') })

    const rules = JSON.parse(readFileSync(world.rulesFile, 'utf8')).rules
    assert.equal(rules.length, 1, JSON.stringify(rules))
    assert.equal(rules[0].path, join(world.ws, 'build'))
    assert.equal(rules[0].recursive, true)
    assert.deepEqual(rules[0].access, { delete: true })
    assert.equal(existsSync(join(world.ws, 'build')), false, 'rm -rf build ran, and the next delete ran under the stored rule')
    assert.equal(await page.locator('[data-dsh-allow=card]').count(), 0)
  })

  test('the Approvals tab: one row per call, who decided it, the baseline behind its toggle', async () => {
    await page.getByText('Approvals', { exact: true }).click()
    const view = page.locator('[data-dsh-allow=approvals]')
    await view.locator('tr[data-call-id]').nth(3).waitFor({ timeout: 15_000 })
    // The kernel's denial is written after the call ran; the tab re-reads every 3 s.
    await view.locator('.dsh-allow-kernel').waitFor({ timeout: 15_000 })
    const rows = async () => view.locator('tr[data-call-id]').evaluateAll((trs) => trs.map((tr) => ({
      command: tr.children[1].innerText, source: tr.dataset.source, outcome: tr.dataset.outcome, detail: tr.children[4].innerText, missing: tr.children[5].innerText,
      outcomeText: tr.children[2].innerText,
    })))
    const rowsNow = await rows()
    // Always allow changed the rules file: a row of its own, the human's (issue 31).
    const change = rowsNow.find((r) => r.outcome === 'changed')
    assert.ok(change, JSON.stringify(rowsNow))
    assert.deepEqual([change.command, change.source], ['Always allow: rm -rf build', 'human'])
    assert.match(change.detail, /build/)
    const shown = rowsNow.filter((r) => r !== change)
    assert.deepEqual(shown.map((r) => [r.command, r.source, r.outcome]), [
      ['rm -rf build', 'human', 'allowed'],
      ['mkdir build && rm -rf build', 'rule', 'allowed'],
      ['cat ~/.ssh/id_ed25519', 'policy', 'refused'],
      [SCRIPT[4].arguments.command, 'fence', 'allowed'],
    ])
    // Allowed by the fence, then denied by the kernel: the row says both, with the path.
    assert.equal(shown[3].outcomeText, 'Allowed · then denied by the kernel')
    assert.match(shown[3].detail, /kernel fence bounds what the command line cannot show/)
    assert.match(shown[3].detail, /denied by the kernel: read ~\/\.ssh\/id_ed25519/)
    assert.equal(await view.locator('.dsh-allow-kernel').getAttribute('title'), `Full path: ${join(world.home, '.ssh', 'id_ed25519')}`)
    await page.screenshot({ path: screenshotPath('approvals-kernel-denied.png') })
    assert.match(shown[0].detail, /Always allow/)
    assert.match(shown[0].detail, /stored delete build\/\*\*/)
    assert.equal(shown[0].missing, 'delete build')
    assert.equal(shown[1].detail, 'delete build')
    assert.equal(shown[2].missing, 'read ~/.ssh/id_ed25519')
    assert.equal(await view.locator('tr[data-call-id]').nth(3).locator('[data-path]').getAttribute('title'), `Full path: ${join(world.home, '.ssh', 'id_ed25519')}`)
    assert.match(await view.locator('label').innerText(), /Show default allows \(1\)/)
    await page.screenshot({ path: screenshotPath('web-approvals.png') })

    await view.locator('[data-dsh-allow=show-baseline]').check()
    await view.locator('tr[data-call-id]').nth(5).waitFor()
    const all = await rows()
    assert.deepEqual(all.map((r) => [r.command, r.source]), [
      ['cat README.md', 'baseline'],
      ['rm -rf build', 'human'],
      ['Always allow: rm -rf build', 'human'],
      ['mkdir build && rm -rf build', 'rule'],
      ['cat ~/.ssh/id_ed25519', 'policy'],
      [SCRIPT[4].arguments.command, 'fence'],
    ])
    await page.screenshot({ path: screenshotPath('web-approvals-baseline.png') })

    // The rows came from the core's wasm in this page, not from the host.
    const fold = await page.evaluate(async () => {
      const core = await import('/dsh-allow/core/web.js')
      return { hasFold: typeof core.foldLedger === 'function', version: core.version() }
    })
    assert.equal(fold.hasFold, true)
  })

  test('in Chinese the tab and the rows speak the zh dictionary', async () => {
    // A persistent context has one locale; the page's language is what DSH reads.
    const zhPage = await browser.newPage()
    await zhPage.addInitScript(() => {
      Object.defineProperty(navigator, 'languages', { get: () => ['zh-CN', 'zh'] })
      Object.defineProperty(navigator, 'language', { get: () => 'zh-CN' })
    })
    try {
      await zhPage.goto(`${web.url}/`)
      // The session's title comes from the scripted model ("e2e").
      await zhPage.getByText('e2e', { exact: true }).first().click()
      await zhPage.getByText('审批', { exact: true }).click()
      const view = zhPage.locator('[data-dsh-allow=approvals]')
      await view.locator('tr[data-call-id]').nth(2).waitFor({ timeout: 15_000 })
      assert.deepEqual(await view.locator('th').allInnerTexts(), ['时间', '命令', '结果', '来源', '规则、复核或操作', '缺少'])
      assert.deepEqual(await view.locator('.dsh-allow-badge').allInnerTexts(), ['人工', '人工', '规则', '策略', '围栏'])
      assert.equal(await view.locator('.dsh-allow-kernel').innerText(), '被内核拒绝:read ~/.ssh/id_ed25519')
      assert.equal(await view.locator('.dsh-allow-kernel').getAttribute('title'), `完整路径:${join(world.home, '.ssh', 'id_ed25519')}`)
      assert.equal(await view.locator('label').innerText(), '显示默认放行(1)')
      await zhPage.screenshot({ path: screenshotPath('web-approvals-zh.png') })
    } finally {
      await zhPage.close()
    }
  })

  test('folding 500 rows in the browser', async (t) => {
    const ms = await page.evaluate(async () => {
      const core = await import('/dsh-allow/core/web.js')
      let text = ''
      for (let i = 0; i < 500; i++) {
        text += `${JSON.stringify({ dshAllow: 1, kind: 'decision', sessionId: 's', callId: `c${i}`, time: '2026-12-02T10:00:00Z', tool: 'bash', command: `rm -rf build-${i}`, cwd: '/w', mode: 'workspace-write', decision: i % 3 ? 'allow' : 'prompt', source: i % 3 ? 'rule' : 'policy', reason: 'r', rules: [{ path: `/w/build-${i}`, recursive: true, access: { delete: true } }], missing: [{ path: `/w/build-${i}`, capability: 'delete' }] })}\n`
        if (i % 3 === 0) text += `${JSON.stringify({ dshAllow: 1, kind: 'answer', sessionId: 's', callId: `c${i}`, time: 't', action: 'allow-once', stored: [] })}\n`
      }
      core.foldLedger(text, { sessionId: 's', limit: 500, baseline: true })
      const runs = []
      for (let k = 0; k < 20; k++) {
        const started = performance.now()
        const r = core.foldLedger(text, { sessionId: 's', limit: 500, baseline: true })
        runs.push(performance.now() - started)
        if (r.rows.length !== 500) throw new Error(`${r.rows.length} rows`)
      }
      runs.sort((a, b) => a - b)
      return { median: runs[10], min: runs[0], max: runs[19], bytes: text.length }
    })
    t.diagnostic(`fold of 500 rows (${ms.bytes} bytes) in Chromium: median ${ms.median.toFixed(2)} ms (min ${ms.min.toFixed(2)}, max ${ms.max.toFixed(2)})`)
    writeFileSync(screenshotPath('web-fold-500.json'), `${JSON.stringify(ms, null, 2)}\n`)
    assert.ok(ms.median < 100, `${ms.median} ms`)
  })
})
