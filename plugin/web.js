// The plugin's routes on DSH's web host (`ctx.webServer`, web profile only).
//
// The host's server applies no origin or host policy to plugin routes (only
// its own /api is fenced), so every route here checks for itself: the peer is
// a loopback address AND the Host header names a loopback host, which also
// defeats DNS rebinding. Headers prove nothing a local process cannot forge,
// so the routes that change anything (a card shown, Always allow) want the
// page's token: a random secret of this process that only the Approvals
// page gets, inside index.html (a meta tag), and that a cross-site page
// cannot read. A fenced call cannot fetch the page at all: the runner
// refuses every connection to a listener of the DSH host. Always allow then
// stores only for a card that is pending and was shown: the card reports
// itself shown when it renders.
//
//   GET  /dsh-allow/audit?sessionId=…&limit=…&baseline=1[&lines=1]
//        the session's calls, folded by the core; with lines=1 the raw ledger
//        tail instead, for the browser to fold with the core's web build
//   GET  /dsh-allow/pending?callId=…   what a pending prompt of ours names
//   POST /dsh-allow/shown              {callId}: the card is on a person's screen
//   POST /dsh-allow/always-allow       {callId, proposals}: store exactly those
//   GET  /dsh-allow/core/…             the core's web build (JS glue + .wasm)
//
// (A prefix route matches `/dsh-allow/core` and everything under `/dsh-allow/core/`.)

import { timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROUTES = {
  audit: '/dsh-allow/audit',
  pending: '/dsh-allow/pending',
  alwaysAllow: '/dsh-allow/always-allow',
  shown: '/dsh-allow/shown',
  core: '/dsh-allow/core',
}

const MAX_BODY = 64 * 1024
/** The header a page sends its token in, and the meta tag that carries it. */
export const TOKEN_HEADER = 'x-dsh-allow-token'
export const TOKEN_META = 'dsh-allow-token'

/** index.html with the page's token in a meta tag (before </head>). */
export function withToken(html, token) {
  const tag = `<meta name="${TOKEN_META}" content="${token}">`
  return html.includes('</head>') ? html.replace('</head>', `${tag}</head>`) : `${tag}${html}`
}

/** Whether a request carries the page's token (compared in constant time). */
export function tokenRefusal(req, token) {
  const sent = req.headers?.[TOKEN_HEADER]
  if (typeof sent !== 'string' || sent.length !== token.length) return "not the Approvals page (no page token)"
  return timingSafeEqual(Buffer.from(sent), Buffer.from(token)) ? undefined : 'not the Approvals page (wrong page token)'
}
const FORWARDING = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip']

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopbackAddress(address) {
  if (typeof address !== 'string') return false
  if (address === '::1') return true
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

/** A Host header (name[:port]) naming localhost, 127.0.0.0/8 or [::1]. */
export function isLoopbackHost(host) {
  if (typeof host !== 'string' || host === '') return false
  let name
  try {
    const url = new URL(`http://${host}`)
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return false
    name = url.hostname
  } catch {
    return false
  }
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
}

/** Why a request may not use our routes, or undefined. */
export function loopbackRefusal(req) {
  if (!isLoopbackAddress(req.socket?.remoteAddress)) return 'the peer is not a loopback address'
  if (!isLoopbackHost(req.headers?.host)) return 'the Host header is not a loopback host'
  return undefined
}

/** Why a state-changing request is not a same-origin browser request, or undefined. */
export function sameOriginRefusal(req) {
  const headers = req.headers ?? {}
  for (const h of FORWARDING) if (headers[h] !== undefined) return `a forwarded request (${h})`
  if (headers['sec-fetch-site'] !== undefined && headers['sec-fetch-site'] !== 'same-origin') return 'not a same-origin request'
  const origin = headers.origin
  if (typeof origin !== 'string') return 'no Origin header'
  let originHost
  try {
    const url = new URL(origin)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'the Origin is not http(s)'
    originHost = url.host
  } catch {
    return 'the Origin header is not a URL'
  }
  if (originHost !== String(headers.host).toLowerCase()) return 'the Origin does not match the Host'
  return undefined
}

function send(res, status, body, type = 'application/json; charset=utf-8') {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))
  res.writeHead(status, {
    'content-type': type,
    'content-length': bytes.length,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  })
  res.end(bytes)
}

function fail(res, status, error) {
  send(res, status, { error })
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = []
    let size = 0
    req.on('data', (b) => {
      size += b.length
      if (size > MAX_BODY) {
        reject(Object.assign(new Error('the request body is too large'), { status: 413 }))
        req.destroy()
        return
      }
      parts.push(b)
    })
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')))
    req.on('error', reject)
  })
}

/** Proposals compared as the card names them: path, shape and granted capabilities. */
export function proposalKey(list) {
  return JSON.stringify((Array.isArray(list) ? list : []).map((p) => [
    String(p?.path),
    p?.recursive === true,
    Object.entries(p?.access ?? {}).filter(([, v]) => v === true).map(([k]) => k).sort(),
  ]))
}

/** The core's web build, served from this package (plugin/../core). */
export function coreAssets(coreDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'core')) {
  const files = {
    'web.js': ['web.js', 'text/javascript; charset=utf-8'],
    'wasm/web/dsh_allow.js': [join('wasm', 'web', 'dsh_allow.js'), 'text/javascript; charset=utf-8'],
    'wasm/web/dsh_allow_bg.wasm': [join('wasm', 'web', 'dsh_allow_bg.wasm'), 'application/wasm'],
  }
  const cache = new Map()
  return (name) => {
    const entry = files[name]
    if (entry === undefined) return undefined
    if (!cache.has(name)) cache.set(name, { body: readFileSync(join(coreDir, entry[0])), type: entry[1] })
    return cache.get(name)
  }
}

/**
 * The route table. `tail` is a LedgerTail (or undefined with `audit: false`),
 * `api` the plugin's `dshAllow` service, `assets` from coreAssets().
 */
export function webRoutes({ tail, api, token, assets = coreAssets(), onError }) {
  const guarded = (method, handler) => async (req, res) => {
    const refusal = loopbackRefusal(req)
    if (refusal !== undefined) return fail(res, 403, `dsh-allow: forbidden: ${refusal}`)
    if (req.method !== method && !(method === 'GET' && req.method === 'HEAD')) {
      res.setHeader('allow', method)
      return fail(res, 405, `dsh-allow: use ${method}`)
    }
    try {
      await handler(req, res, new URL(req.url ?? '/', 'http://loopback'))
    } catch (error) {
      onError?.(error)
      if (!res.headersSent) fail(res, error.status ?? 500, `dsh-allow: ${error.message}`)
    }
  }

  const audit = guarded('GET', (req, res, url) => {
    const sessionId = url.searchParams.get('sessionId') || undefined
    const limit = clampLimit(url.searchParams.get('limit'))
    const baseline = url.searchParams.get('baseline') === '1'
    const lines = url.searchParams.get('lines') === '1'
    const head = { sessionId: sessionId ?? null, limit, baseline }
    if (tail === undefined) return send(res, 200, { ...head, audit: false, rows: [], skipped: 0, hiddenBaseline: 0, text: '' })
    if (lines) {
      const w = tail.window(sessionId)
      return send(res, 200, { ...head, audit: true, text: w.text, bytes: w.bytes, truncated: w.truncated })
    }
    const folded = tail.read({ sessionId, limit, baseline })
    return send(res, 200, { ...head, audit: true, ...folded })
  })

  const pending = guarded('GET', (req, res, url) => {
    const ask = api.pending(url.searchParams.get('callId') ?? '')
    if (ask === undefined) return fail(res, 404, 'dsh-allow: no pending prompt for that call')
    return send(res, 200, ask)
  })

  // A state-changing request from the Approvals page: same origin, the
  // page's token, a JSON body naming a pending prompt.
  const fromPage = async (req, res) => {
    const refusal = sameOriginRefusal(req) ?? tokenRefusal(req, token)
    if (refusal !== undefined) return void fail(res, 403, `dsh-allow: forbidden: ${refusal}`)
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return void fail(res, 415, 'dsh-allow: send application/json')
    }
    let body
    try {
      body = JSON.parse(await readBody(req))
    } catch (error) {
      return void fail(res, error.status ?? 400, `dsh-allow: ${error.status ? error.message : 'the body is not JSON'}`)
    }
    const ask = api.pending(typeof body?.callId === 'string' ? body.callId : '')
    if (ask === undefined) return void fail(res, 404, 'dsh-allow: no pending prompt for that call')
    if (ask.state !== 'asking') return void fail(res, 409, 'dsh-allow: that prompt is not waiting for an answer')
    return { body, ask }
  }

  const shown = guarded('POST', async (req, res) => {
    const got = await fromPage(req, res)
    if (got === undefined) return
    api.shown(got.ask.callId)
    return send(res, 200, { callId: got.ask.callId, shown: true })
  })

  const alwaysAllow = guarded('POST', async (req, res) => {
    const got = await fromPage(req, res)
    if (got === undefined) return
    const { body, ask } = got
    if (ask.shownAt === undefined) return fail(res, 409, 'dsh-allow: that prompt has not been shown on the Approvals page')
    if (ask.alwaysAllow === false) return fail(res, 403, 'dsh-allow: the managed policy turns Always allow off for this card')
    // Store exactly what the card showed, never what the page might add.
    if (proposalKey(body.proposals) !== proposalKey(ask.proposals)) {
      return fail(res, 409, 'dsh-allow: the rules named do not match the pending prompt')
    }
    const stored = await api.alwaysAllow(ask.callId)
    return send(res, 200, { callId: ask.callId, stored })
  })

  const core = guarded('GET', (req, res, url) => {
    const asset = assets(url.pathname.slice(ROUTES.core.length + 1))
    if (asset === undefined) return fail(res, 404, 'dsh-allow: no such file')
    res.writeHead(200, {
      'content-type': asset.type,
      'content-length': asset.body.length,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    })
    res.end(req.method === 'HEAD' ? undefined : asset.body)
  })

  return [
    { kind: 'exact', path: ROUTES.audit, handler: audit },
    { kind: 'exact', path: ROUTES.pending, handler: pending },
    { kind: 'exact', path: ROUTES.alwaysAllow, handler: alwaysAllow },
    { kind: 'exact', path: ROUTES.shown, handler: shown },
    { kind: 'prefix', path: ROUTES.core, handler: core },
  ]
}

function clampLimit(value) {
  const n = Number.parseInt(value ?? '', 10)
  return Number.isFinite(n) && n > 0 ? Math.min(n, 500) : 500
}
