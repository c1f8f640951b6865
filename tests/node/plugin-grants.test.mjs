// The one-shot grant store: bound to one call, found by command line once,
// and serializing a session while it lives.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { GrantStore, onceRules } from '../../plugin/grants.js'

const rule = { path: '/w/build', recursive: true, access: { delete: true } }

test('a call that does not ask gives the turn straight back', async () => {
  const g = new GrantStore({ ttlMs: 60_000 })
  await g.turn('s1', 'call-a')
  assert.equal(g.isHeld('s1'), true)
  g.release('call-a')
  assert.equal(g.isHeld('s1'), false)
})

test('a one-shot grant is visible to the decision only for its own call', () => {
  const g = new GrantStore({ ttlMs: 60_000 })
  g.hold('s1', 'call-a', 'rm -rf build')
  g.bind('call-a', onceRules('call-a', [rule], 't'))
  assert.equal(g.forCall('call-a').length, 1)
  assert.deepEqual(g.forCall('call-b'), [])
  g.clear()
})

test('the profile finds the grant by session and exact command line, once', () => {
  const g = new GrantStore({ ttlMs: 60_000 })
  g.hold('s1', 'call-a', 'rm -rf build')
  g.bind('call-a', onceRules('call-a', [rule], 't'))
  assert.deepEqual(g.claim('s2', 'rm -rf build'), [])
  assert.deepEqual(g.claim('s1', 'rm -rf build '), [])
  assert.equal(g.claim('s1', 'rm -rf build').length, 1)
  assert.deepEqual(g.claim('s1', 'rm -rf build'), [], 'a second run of the same line gets nothing')
  g.clear()
})

test('while a grant lives, other calls of the same session wait for it to settle', async () => {
  const g = new GrantStore({ ttlMs: 60_000 })
  assert.equal(await g.turn('s1', 'call-a'), true)
  g.hold('s1', 'call-a', 'rm -rf build')
  const order = []
  const other = g.turn('s1', 'call-b').then(() => order.push('b decided'))
  const elsewhere = g.turn('s2', 'call-c').then(() => order.push('c decided')).then(() => g.release('call-c'))
  await elsewhere
  await new Promise((r) => setTimeout(r, 20))
  order.push('a settles')
  g.release('call-a')
  await other
  assert.deepEqual(order, ['c decided', 'a settles', 'b decided'])
})

test('two waiters never both take the turn', async () => {
  const g = new GrantStore({ ttlMs: 60_000 })
  g.hold('s1', 'call-a', 'x')
  const taken = []
  const take = async (id) => {
    await g.turn('s1', id)
    taken.push(id)
  }
  const b = take('call-b')
  const c = take('call-c')
  g.release('call-a')
  await new Promise((r) => setTimeout(r, 10))
  assert.deepEqual(taken.length, 1, 'exactly one waiter holds the session')
  g.release(taken[0])
  await Promise.all([b, c])
  assert.equal(taken.length, 2)
  g.clear()
})

test('the TTL releases a grant whose call never settles', async () => {
  const g = new GrantStore({ ttlMs: 30 })
  g.hold('s1', 'call-a', 'x')
  g.bind('call-a', onceRules('call-a', [rule], 't'))
  const keepAlive = setTimeout(() => {}, 1000)
  await g.turn('s1', 'call-b')
  clearTimeout(keepAlive)
  assert.deepEqual(g.forCall('call-a'), [])
  assert.equal(g.holders.get('s1').callId, 'call-b')
  g.clear()
})

test('an aborted caller stops waiting', async () => {
  const g = new GrantStore({ ttlMs: 60_000 })
  g.hold('s1', 'call-a', 'x')
  const ac = new AbortController()
  const waiting = g.turn('s1', 'call-b', ac.signal)
  ac.abort()
  assert.equal(await waiting, false)
  assert.equal(g.holders.get('s1').callId, 'call-a')
  g.clear()
})

test('the folders a line makes go with its call to the profile, once, even with no rule to carry', () => {
  const g = new GrantStore({ ttlMs: 60_000 })
  g.hold('s1', 'call-a', 'python3 -m venv env')
  g.bind('call-a', [], ['/w/env'])
  assert.deepEqual(g.claimCall('s2', 'python3 -m venv env'), { rules: [], folders: [], kept: [] })
  assert.deepEqual(g.claimCall('s1', 'python3 -m venv env'), { rules: [], folders: ['/w/env'], kept: [] })
  assert.deepEqual(g.claimCall('s1', 'python3 -m venv env'), { rules: [], folders: [], kept: [] }, 'claimed once')
  g.release('call-a')
  g.hold('s1', 'call-b', 'mkdir -p ~/n && echo x > ~/n/t')
  g.bind('call-b', onceRules('call-b', [rule], 't'), ['/h/n'])
  const claimed = g.claimCall('s1', 'mkdir -p ~/n && echo x > ~/n/t')
  assert.equal(claimed.rules.length, 1)
  assert.deepEqual(claimed.folders, ['/h/n'])
  g.clear()
})
