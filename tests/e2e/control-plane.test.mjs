// The host's control plane is out of reach of fenced code (issue 31), in a
// real `dsh web` with dsh-allow installed as a user installs it and the
// Landlock runner up. A scripted model's bash call runs hidden inline
// Python, which the core allows "left to the kernel"; the Python plays the
// attacker: it finds the host's port, then tries to answer cards, store a
// rule, switch its session to danger-full-access and change the default
// preset over loopback. Every step must be refused by the fence, nothing
// may change, and the ledger must name the refused connections. As a
// control the same script, run by this test outside any fence, reaches the
// server: the attack is real, and the fence is what stopped it.

import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup } from './harness.mjs'
import { loadPlaywright, makeWebWorld, missingWebPrerequisite, openBrowser, startSession, startWeb } from './web-harness.mjs'

const ATTACK = String.raw`
import json, os, socket, sys, urllib.request, urllib.error
out = {"env": {k: os.environ.get(k) for k in ("DSH_WEB_URL", "DSH_SESSION_ID", "DSH_SESSION_JSONL")}}
ports = set()
for f in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(f).read().splitlines()[1:]:
        cols = line.split()
        if cols[3] == "0A":
            ports.add(int(cols[1].rsplit(":", 1)[1], 16))
bases = sys.argv[1:2] or ["http://127.0.0.1:%d" % p for p in sorted(ports)]
session = sys.argv[2] if len(sys.argv) > 2 else (os.environ.get("DSH_SESSION_ID") or "unknown")
def call(url, body, headers=None):
    try:
        req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})
        with urllib.request.urlopen(req, timeout=5) as r:
            return "status %d %s" % (r.status, r.read()[:300].decode(errors="replace"))
    except urllib.error.HTTPError as e:
        return "status %d" % e.code
    except OSError as e:
        return "failed %s" % getattr(e, "reason", e)
def rpc(base, method, payload):
    return call(base + "/api/" + method, {"type": "client-request", "rpcId": "x", "method": method, "payload": payload})
def command(base, line):
    return call(base + "/api/commands/execute", {"type": "client-request", "rpcId": "x", "method": "commands/execute", "payload": {"args": {"agentId": session, "line": line, "images": []}}})
out["tries"] = []
for base in bases:
    t = {"base": base}
    t["list"] = rpc(base, "session.list", {})
    t["respond"] = call(base + "/api/respond", {"type": "client-response", "rpcId": "x", "result": {"ok": True, "value": {"sessionId": session, "approvalId": "x", "outcome": "allowed-once"}}})
    t["always"] = call(base + "/dsh-allow/always-allow", {"callId": "x", "proposals": []}, {"origin": base})
    t["rule"] = command(base, "/allow add read ~/.ssh folder")
    t["mode"] = command(base, "/permission danger-full-access")
    t["preset"] = rpc(base, "settings.mutate", {"ns": "permission", "ops": [{"op": "set", "path": ["defaultPreset"], "value": "danger-full-access"}]})
    out["tries"].append(t)
text = json.dumps(out)
print(text)
if len(sys.argv) < 2:
    open("attack.json", "w").write(text)
`

const bash = (command) => ({ tool: 'bash', arguments: { command, description: 'scripted step' } })
const SCRIPT = [
  bash(`python3 -c '${ATTACK.replaceAll("'", "'\\''")}'`),
  bash('cat README.md'),
]

const { chromium, missing: noPlaywright } = await loadPlaywright()
const missing = missingWebPrerequisite() ?? noPlaywright

const ledger = (world) => (existsSync(world.auditFile) ? readFileSync(world.auditFile, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l))

describe('the host control plane is out of reach of a fenced call (real dsh web, Landlock runner)', { skip: missing }, () => {
  let world
  let web
  let browser
  before(async () => {
    world = makeWebWorld('control-plane', { script: SCRIPT })
    web = await startWeb(world)
    browser = await openBrowser(chromium, world)
    const page = browser.pages()[0] ?? await browser.newPage()
    await page.goto(`${web.url}/`)
    await startSession(page, world, 'run the scripted steps')
    // The second step runs only after the attack's call has ended.
    const deadline = Date.now() + 60_000
    while (!ledger(world).some((r) => r.kind === 'decision' && r.command === 'cat README.md')) {
      if (Date.now() > deadline) throw new Error('the scripted calls did not run')
      await new Promise((r) => setTimeout(r, 200))
    }
  })
  after(async () => {
    await browser?.close()
    await web?.stop()
    if (world) cleanup(world)
  })

  test('hidden code finds no address, and every connection to the host is refused by the fence', () => {
    const attack = JSON.parse(readFileSync(join(world.ws, 'attack.json'), 'utf8'))
    assert.deepEqual(attack.env, { DSH_WEB_URL: null, DSH_SESSION_ID: null, DSH_SESSION_JSONL: null }, 'the control plane is not named in the call')
    const port = new URL(web.url).port
    const tried = attack.tries.find((t) => t.base.endsWith(`:${port}`))
    assert.ok(tried, `the attack found the host's port in /proc/net/tcp: ${JSON.stringify(attack.tries.map((t) => t.base))}`)
    for (const step of ['list', 'respond', 'always', 'rule', 'mode', 'preset']) {
      assert.match(tried[step], /^failed .*(Errno 13|Permission denied)/, `${step}: ${tried[step]}`)
    }
  })

  test('nothing changed: no rule, no mode, no default preset; the ledger names the refused connections', () => {
    const rules = existsSync(world.rulesFile) ? readFileSync(world.rulesFile, 'utf8') : ''
    assert.doesNotMatch(rules, /\.ssh/, 'no rule was stored')
    const settings = join(world.dshHome, 'settings.yaml')
    assert.ok(!existsSync(settings) || !readFileSync(settings, 'utf8').includes('danger-full-access'), 'the default preset is unchanged')
    const records = ledger(world)
    assert.ok(!records.some((r) => r.kind === 'mode'), 'no session changed mode')
    const refused = records.filter((r) => r.kind === 'kernel').flatMap((r) => r.denied).filter((d) => d.door === 'socket')
    assert.ok(refused.some((d) => d.path.endsWith(`:${new URL(web.url).port}`)), `the ledger names the host's port: ${JSON.stringify(refused)}`)
  })

  test('a local client outside the fence without the page token cannot store a rule through our route, even with forged headers', async () => {
    const r = await fetch(`${web.url}/dsh-allow/always-allow`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: web.url, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ callId: 'x', proposals: [] }),
    })
    assert.equal(r.status, 403)
    assert.match((await r.json()).error, /page token/)
    const page = await (await fetch(`${web.url}/`)).text()
    assert.match(page, /<meta name="dsh-allow-token" content="[0-9a-f]{64}">/, 'the page itself carries the token')
  })

  test('control: the same attack from outside the fence reaches the host, and the mode change it makes is recorded and shown', async () => {
    const sessionId = ledger(world).find((r) => r.kind === 'decision')?.sessionId
    const out = JSON.parse(execFileSync('python3', ['-c', ATTACK, web.url, sessionId], { encoding: 'utf8' }))
    const tried = out.tries[0]
    assert.match(tried.list, /^status 200/, `unfenced, the host answers: ${tried.list}`)
    assert.match(tried.mode, /"ok":true/, tried.mode)
    assert.match(tried.rule, /"ok":true/, tried.rule)
    // The switch is in the ledger and in /allow status.
    const deadline = Date.now() + 10_000
    while (!ledger(world).some((r) => r.kind === 'mode' && r.sessionId === sessionId)) {
      if (Date.now() > deadline) assert.fail(`the switch to danger-full-access was not recorded: ${JSON.stringify(tried)} ${JSON.stringify(ledger(world).filter((r) => r.kind !== 'decision'))}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.ok(ledger(world).some((r) => r.kind === 'mode' && r.sessionId === '*' && r.mode === 'danger-full-access'), 'the default preset change is recorded')
    const status = await fetch(`${web.url}/api/commands/execute`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId: 's', method: 'commands/execute', payload: { args: { agentId: sessionId, line: '/allow status', images: [] } } }),
    }).then((r) => r.text())
    assert.match(status, /danger-full-access/, status)
    assert.match(status, /Side doors: shut/, 'the probe found the side doors shut')
    // The rule the unfenced /allow stored is a ledger row of its own, named.
    const stored = ledger(world).find((r) => r.kind === 'rules' && r.source === 'command')
    assert.ok(stored, 'the /allow change is recorded')
    assert.deepEqual(stored.stored.map((s) => s.path), [join(world.home, '.ssh')], JSON.stringify(stored))
  })

  test('a hand edit of the rules file is recorded at the next read', async () => {
    const sessionId = ledger(world).find((r) => r.kind === 'decision')?.sessionId
    const text = JSON.parse(readFileSync(world.rulesFile, 'utf8'))
    text.rules.push({ id: 'by-hand', path: join(world.home, 'notes'), recursive: true, access: { write: true } })
    writeFileSync(world.rulesFile, JSON.stringify(text))
    await fetch(`${web.url}/api/commands/execute`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId: 's', method: 'commands/execute', payload: { args: { agentId: sessionId, line: '/allow list', images: [] } } }),
    })
    const edit = ledger(world).find((r) => r.kind === 'rules' && r.source === 'file')
    assert.ok(edit, 'the edit is recorded')
    assert.match(edit.reason, /\+ write .*notes \(folder\)/)
  })
})
