// The browser half, loaded the way DSH's client loader loads it (a lazy-CJS
// factory handed to window.__ModuleLoader__), with a stand-in React and host
// context: the dictionaries have the same keys in zh and en, every key the
// components ask for exists, the slots are the ones the spec names, and the
// card claims only the prompts this plugin raised.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { runInNewContext } from 'node:vm'
import { fileURLToPath } from 'node:url'

const SOURCE = readFileSync(fileURLToPath(new URL('../../client/client.js', import.meta.url)), 'utf8')

function load() {
  let loaded
  const window = { __ModuleLoader__: { load: (entry) => { loaded = entry } } }
  runInNewContext(SOURCE, { window })
  assert.equal(loaded.id, 'dsh-allow', 'the loader id is the package name')
  const required = []
  const React = { createElement: () => null, useState: (v) => [v, () => {}], useEffect: () => {}, useMemo: (f) => f(), useRef: () => ({ current: null }) }
  const exports = loaded.factory((name) => {
    required.push(name)
    if (name === 'react') return React
    throw new Error(`unexpected require(${name})`)
  })
  return { exports, required }
}

/** A value from the bundle's realm, as plain data of this one. */
const plain = (v) => JSON.parse(JSON.stringify(v))

function fakeHost() {
  const registered = { locale: [], slots: [], effects: [] }
  const ctx = {
    effect: (fn, label) => { registered.effects.push(label); fn() },
    locale: {
      register: (ns, dicts) => { registered.locale.push({ ns, dicts }); return () => {} },
      bind: (ns) => (key) => `${ns}:${key}`,
    },
    slots: {
      inject: (name, fn) => fn(),
      register: (options, component) => { registered.slots.push({ options, component }); return () => {} },
    },
  }
  return { ctx, registered }
}

test('React comes from the host and nothing else is required', () => {
  assert.deepEqual(load().required, ['react'])
})

test('zh and en have the same keys and no empty string', () => {
  const { en, zh } = load().exports.dictionaries
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort())
  for (const [lang, dict] of Object.entries({ en, zh })) {
    for (const [k, v] of Object.entries(dict)) assert.ok(typeof v === 'string' && v.trim() !== '', `${lang}.${k}`)
  }
})

test('every key the components ask for is in the dictionary, including the core\'s vocabularies', () => {
  const { en, zh } = load().exports.dictionaries
  const literal = [...SOURCE.matchAll(/\bt\('([a-zA-Z.-]+)'/g)].map((m) => m[1]).filter((k) => !k.endsWith('.'))
  assert.ok(literal.length > 20)
  const dynamic = [
    ...['allowed', 'refused', 'denied', 'asked', 'cancelled', 'unavailable'].map((o) => `outcome.${o}`),
    ...['rule', 'baseline', 'fence', 'auto-review', 'human', 'policy'].map((s) => `source.${s}`),
    ...['allow-once', 'always-allow', 'deny', 'cancelled', 'unavailable'].map((a) => `action.${a}`),
  ]
  for (const key of [...literal, ...dynamic]) {
    assert.ok(key in en, `en lacks ${key}`)
    assert.ok(key in zh, `zh lacks ${key}`)
  }
})

test('the card\'s wording is the spec\'s', () => {
  const { en, zh } = load().exports.dictionaries
  assert.equal(en['card.title'], 'Filesystem permission required')
  assert.deepEqual(['card.operation', 'card.path', 'card.command', 'card.sandbox'].map((k) => en[k]), ['Operation', 'Path', 'Command', 'Sandbox'])
  assert.deepEqual(['card.deny', 'card.allowOnce'].map((k) => zh[k]), ['拒绝', '允许一次'])
  assert.equal(en['card.alwaysAllow'], 'Always allow: {rule}')
  assert.equal(zh['view.approvals'], '审批')
})

test('apply registers the dictionaries, the Approvals tab after Trajectory, and the card ahead of DSH\'s own', () => {
  const { exports } = load()
  assert.deepEqual(plain(exports.inject), ['slots', 'locale'])
  const { ctx, registered } = fakeHost()
  exports.apply(ctx)
  assert.equal(registered.locale[0].ns, 'dsh-allow')
  const view = registered.slots.find((s) => s.options.name === 'conversation.view')
  assert.equal(view.options.id, 'approvals')
  assert.ok(view.options.order > 10, 'after Trajectory (order 10)')
  assert.equal(view.options.label(), 'dsh-allow:view.approvals')
  assert.deepEqual(plain(view.options.inject('s1')), { sessionId: 's1' })
  const card = registered.slots.find((s) => s.options.name === 'conversation.composer')
  assert.ok(card.options.priority < 1, 'elected before DSH\'s approval panel (priority 1)')
  assert.equal(typeof card.options.select, 'function')
})

test('the card claims only the prompts this plugin raised', () => {
  const { selectOurApproval } = load().exports
  const ours = { kind: 'approval', key: 'a:1', payload: { approvalId: '1', toolName: 'bash', callId: 'c1', reason: 'dsh-allow: delete /w/build' } }
  const escalation = { kind: 'approval', key: 'a:2', payload: { approvalId: '2', toolName: 'bash', callId: 'c1', reason: 'escalate sandbox to workspace-write: x' } }
  const question = { kind: 'question', key: 'q:1', payload: { reason: 'dsh-allow: lookalike' } }
  assert.equal(selectOurApproval({ interactions: [escalation, question, ours] }), ours)
  assert.equal(selectOurApproval({ interactions: [escalation, question] }), null)
  assert.equal(selectOurApproval({ interactions: [] }), null)
})

test('paths read relative to the workspace, else to home, else in full', () => {
  const { shortPath } = load().exports
  const places = { workspace: '/root/.cache/t/e2e-web-qnzOza/ws', home: '/root/.cache/t/e2e-web-qnzOza/home' }
  assert.equal(shortPath('/root/.cache/t/e2e-web-qnzOza/ws/build', places), 'build')
  assert.equal(shortPath('/root/.cache/t/e2e-web-qnzOza/ws/build/x', places), 'build/x')
  assert.equal(shortPath('/root/.cache/t/e2e-web-qnzOza/ws', places), './')
  assert.equal(shortPath('/root/.cache/t/e2e-web-qnzOza/home/.ssh/id_ed25519', places), '~/.ssh/id_ed25519')
  // A sibling that only shares the prefix is not inside.
  assert.equal(shortPath('/root/.cache/t/e2e-web-qnzOza/wsx/a', places), '/root/.cache/t/e2e-web-qnzOza/wsx/a')
  assert.equal(shortPath('/etc/passwd', places), '/etc/passwd')
  // A row written before the ledger recorded where the call stood: in full.
  assert.equal(shortPath('/w/build', {}), '/w/build')
  // The workspace wins over home when it lies inside home.
  assert.equal(shortPath('/h/p/src/a.rs', { workspace: '/h/p', home: '/h' }), 'src/a.rs')
})

test('a reason names its paths the same way, in full on hover', () => {
  const { shortText } = load().exports
  const places = { workspace: '/r/ws', home: '/r/home' }
  assert.equal(
    shortText('refused: /r/home/.ssh/id_ed25519 is in a credential store (/r/home/.ssh); delete /r/ws/build', places),
    'refused: ~/.ssh/id_ed25519 is in a credential store (~/.ssh); delete build')
  assert.equal(shortText('write on /etc/x', places), 'write on /etc/x')
  assert.equal(shortText('write on /r/wsx/a', places), 'write on /r/wsx/a')
})

test('names and commands are shown with their control characters escaped, paths shortened first', () => {
  const { shown, shortPath, shortText } = load().exports
  assert.equal(shown('a\nb\tc\u001b[0m\u202etxt.exe\u0085\\n'), 'a\\nb\\tc\\e[0m\\u202etxt.exe\\x85\\n')
  assert.equal(shortPath('/w/evil\nname', { workspace: '/w', home: '/h' }), 'evil\\nname')
  assert.equal(shortPath('/h/.ssh/\u2066k', { workspace: '/w', home: '/h' }), '~/.ssh/\\u2066k')
  assert.equal(shortText('delete is not granted on /w/a\rb', { workspace: '/w', home: '/h' }), 'delete is not granted on a\\rb')
  assert.equal(shown('plain 路径 ✓'), 'plain 路径 ✓')
})
