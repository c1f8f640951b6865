// The plugin's web routes, served by a real node:http server on loopback the
// way DSH's web host dispatches them: loopback peer and loopback Host or 403,
// read-only JSON with no-store, the core's .wasm as application/wasm, and an
// Always allow that wants a same-origin request and exactly the named rules.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest, createServer } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ledgerRecord } from '../../plugin/ledger.js'
import { LedgerTail } from '../../plugin/tail.js'
import { coreAssets, isLoopbackAddress, isLoopbackHost, webRoutes } from '../../plugin/web.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const core = await import(join(ROOT, 'pkg', 'core', 'index.js'))

const proposals = [{ path: '/w/build', recursive: true, access: { delete: true } }]
let server
let port
let dir
let stored
let pending

/** The host's dispatch (dsh-host-webserver `match`): exact, then longest prefix. */
function dispatch(routes) {
  return (req, res) => {
    const path = new URL(req.url, 'http://x').pathname
    const route = routes.find((r) => r.kind === 'exact' && r.path === path) ??
      routes.filter((r) => r.kind === 'prefix' && (path === r.path || path.startsWith(`${r.path}/`))).sort((a, b) => b.path.length - a.path.length)[0]
    if (route === undefined) {
      res.writeHead(404)
      res.end()
      return
    }
    route.handler(req, res)
  }
}

const TOKEN = 'a'.repeat(64)

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-allow-web-'))
  const file = join(dir, 'audit.ndjson')
  const rec = (call, decision, tier) => JSON.stringify(ledgerRecord({
    kind: 'decision', time: 't', sessionId: 's1', callId: call, tool: 'bash', command: `cmd ${call}`, cwd: '/w', mode: 'workspace-write',
    decision, effects: [{ path: '/w/x', capability: 'read', granted: decision === 'allow', tier }], missing: [], reason: 'r',
  }, (s) => s))
  writeFileSync(file, `${rec('a', 'allow', 'baseline')}\n${rec('b', 'allow', 'rule')}\n${rec('c', 'refuse', 'protected')}\n`)
  stored = []
  pending = { callId: 'call-1', sessionId: 's1', command: 'rm -rf build', mode: 'workspace-write', missing: [{ path: '/w/build', capability: 'delete' }], proposals, state: 'asking' }
  const api = {
    pending: (callId) => (callId === pending.callId ? structuredClone(pending) : undefined),
    alwaysAllow: async (callId) => {
      stored.push(callId)
      return proposals
    },
    shown: (callId) => {
      if (callId === pending.callId) pending.shownAt ??= 'now'
    },
  }
  const routes = webRoutes({ tail: new LedgerTail(file, core), api, token: TOKEN, assets: coreAssets(join(ROOT, 'pkg', 'core')) })
  server = createServer(dispatch(routes))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = server.address().port
})

after(() => {
  server?.close()
  rmSync(dir, { recursive: true, force: true })
})

function call(path, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      const parts = []
      res.on('data', (b) => parts.push(b))
      res.on('end', () => {
        const raw = Buffer.concat(parts)
        let json
        try { json = JSON.parse(raw.toString('utf8')) } catch {}
        resolve({ status: res.statusCode, headers: res.headers, raw, json })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

test('loopback addresses and Host headers', () => {
  for (const a of ['127.0.0.1', '127.9.8.7', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(a), true, a)
  for (const a of ['10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', '0.0.0.0', '', undefined]) assert.equal(isLoopbackAddress(a), false, String(a))
  for (const h of ['127.0.0.1:3080', 'localhost:3080', 'localhost', '[::1]:3080', '127.0.0.2']) assert.equal(isLoopbackHost(h), true, h)
  for (const h of ['evil.example:3080', '127.0.0.1.evil.example', 'localhost.evil.example', 'user@127.0.0.1', '', undefined, '127.0.0.1/x']) {
    assert.equal(isLoopbackHost(h), false, String(h))
  }
})

test('GET /dsh-allow/audit: the session\'s rows as JSON, no-store, baseline hidden unless asked for', async () => {
  const r = await call('/dsh-allow/audit?sessionId=s1&limit=50')
  assert.equal(r.status, 200)
  assert.equal(r.headers['cache-control'], 'no-store')
  assert.match(r.headers['content-type'], /^application\/json/)
  assert.deepEqual(r.json.rows.map((x) => [x.callId, x.source]), [['b', 'rule'], ['c', 'policy']])
  assert.equal(r.json.hiddenBaseline, 1)
  const all = await call('/dsh-allow/audit?sessionId=s1&baseline=1')
  assert.deepEqual(all.json.rows.map((x) => x.source), ['baseline', 'rule', 'policy'])
})

test('GET /dsh-allow/audit?lines=1: the raw tail, for the browser to fold', async () => {
  const r = await call('/dsh-allow/audit?sessionId=s1&lines=1')
  assert.equal(r.status, 200)
  assert.equal(r.json.text.split('\n').filter(Boolean).length, 3)
  assert.equal(core.foldLedger(r.json.text, { sessionId: 's1', baseline: true }).rows.length, 3)
})

test('a non-loopback Host header is refused with 403 (DNS rebinding)', async () => {
  for (const host of [`evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`]) {
    for (const path of ['/dsh-allow/audit?sessionId=s1', '/dsh-allow/pending?callId=call-1', '/dsh-allow/core/web.js']) {
      const r = await call(path, { headers: { host } })
      assert.equal(r.status, 403, `${host} ${path}`)
      assert.equal(r.json.rows, undefined)
    }
  }
})

test('a non-loopback peer is refused with 403', async () => {
  const routes = webRoutes({ tail: undefined, api: { pending: () => pending }, assets: () => undefined })
  const audit = routes.find((r) => r.path === '/dsh-allow/audit')
  let status
  const res = { headersSent: false, setHeader() {}, writeHead(s) { status = s }, end() {} }
  await audit.handler({ method: 'GET', url: '/dsh-allow/audit', socket: { remoteAddress: '192.168.1.20' }, headers: { host: '127.0.0.1:3080' } }, res)
  assert.equal(status, 403)
})

test('the audit route is read-only', async () => {
  const r = await call('/dsh-allow/audit?sessionId=s1', { method: 'POST', headers: { origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json' }, body: '{}' })
  assert.equal(r.status, 405)
})

test('the core\'s web build is served, the .wasm as application/wasm', async () => {
  const wasm = await call('/dsh-allow/core/wasm/web/dsh_allow_bg.wasm')
  assert.equal(wasm.status, 200)
  assert.equal(wasm.headers['content-type'], 'application/wasm')
  assert.deepEqual([...wasm.raw.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d])
  const glue = await call('/dsh-allow/core/web.js')
  assert.match(glue.headers['content-type'], /^text\/javascript/)
  assert.equal((await call('/dsh-allow/core/../index.js')).status, 404)
  assert.equal((await call('/dsh-allow/core/index.js')).status, 404)
})

test('GET /dsh-allow/pending names what the card shows', async () => {
  const r = await call('/dsh-allow/pending?callId=call-1')
  assert.equal(r.status, 200)
  assert.deepEqual(r.json.missing, [{ path: '/w/build', capability: 'delete' }])
  assert.equal((await call('/dsh-allow/pending?callId=nope')).status, 404)
})

test('Always allow wants the page: same origin, its token, a card it showed; and stores exactly the named rules', async () => {
  const origin = `http://127.0.0.1:${port}`
  const to = (route) => (headers, body = { callId: 'call-1', proposals }) => call(route, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dsh-allow-token': TOKEN, ...headers }, body: JSON.stringify(body),
  })
  const post = to('/dsh-allow/always-allow')
  const shown = to('/dsh-allow/shown')
  stored.length = 0
  delete pending.shownAt
  // Headers any local process can forge, without the page's token: refused.
  assert.equal((await post({ origin, 'sec-fetch-site': 'same-origin', 'x-dsh-allow-token': '' })).status, 403, 'no token')
  assert.equal((await post({ origin, 'x-dsh-allow-token': 'f'.repeat(64) })).status, 403, 'a wrong token')
  assert.equal((await shown({ origin, 'x-dsh-allow-token': 'nope' })).status, 403, 'the card cannot be marked shown without the token')
  assert.equal((await post({ origin })).status, 409, 'a card never shown on the page')
  assert.deepEqual(stored, [])
  assert.equal((await shown({ origin })).status, 200, 'the page marks the card shown')
  assert.equal((await post({})).status, 403, 'no Origin')
  assert.equal((await post({ origin: 'http://evil.example' })).status, 403, 'foreign Origin')
  assert.equal((await post({ origin: 'http://localhost:1' })).status, 403, 'Origin not equal to Host')
  assert.equal((await post({ origin, 'x-forwarded-for': '10.0.0.1' })).status, 403, 'forwarded')
  assert.equal((await post({ origin, 'sec-fetch-site': 'cross-site' })).status, 403, 'cross-site fetch')
  assert.equal((await post({ origin }, { callId: 'call-1', proposals: [{ ...proposals[0], path: '/w' }] })).status, 409, 'a wider rule than the card named')
  assert.equal((await post({ origin }, { callId: 'call-1', proposals: [] })).status, 409, 'not the named rules')
  assert.equal((await post({ origin }, { callId: 'nope', proposals })).status, 404)
  assert.equal((await call('/dsh-allow/always-allow', { method: 'GET' })).status, 405)
  assert.deepEqual(stored, [], 'nothing stored by a refused request')
  const ok = await post({ origin, 'sec-fetch-site': 'same-origin' })
  assert.equal(ok.status, 200)
  assert.deepEqual(stored, ['call-1'])
  assert.equal(ok.headers['cache-control'], 'no-store')
})
