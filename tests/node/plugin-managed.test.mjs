// The managed policy's files as the plugin reads them (plugin/managed.js),
// judged by the real core: the system file and the config's further files,
// a file at fault, an edit picked up, the protected list, and the system
// path itself read for real inside a mount namespace of this test's own
// (an overlay on /etc that nothing outside the namespace sees).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as core from '../../pkg/core/index.js'
import { ManagedFiles, writeDenial } from '../../plugin/managed.js'

const REPO = fileURLToPath(new URL('../..', import.meta.url))

function world() {
  const dir = mkdtempSync(join(REPO, 'target', 'managed-node-'))
  return { dir, file: (name) => join(dir, name), done: () => rmSync(dir, { recursive: true, force: true }) }
}

const DENY = { version: 1, deny: [{ path: '~/secrets', recursive: true, access: { read: true } }], alwaysAllow: false }

function request(extra) {
  return {
    command: 'cat /h/secrets/key', cwd: '/w', workspace: '/w', home: '/h', harnessHome: '/h/.dsh',
    platform: 'linux', mode: 'workspace-write', ...extra,
  }
}

test('the system file is the platform\'s fixed path, and a missing one is no policy', () => {
  assert.equal(core.managedSystemFile('linux'), '/etc/dsh-allow/managed.json')
  assert.equal(core.managedSystemFile('macos'), '/Library/Application Support/dsh-allow/managed.json')
  const w = world()
  try {
    const m = new ManagedFiles({ system: w.file('not-there.json'), core })
    const load = m.load()
    assert.equal(load.policy, undefined)
    assert.deepEqual(load.files, [{ file: w.file('not-there.json'), state: 'absent' }])
    assert.deepEqual(m.files(), [w.file('not-there.json')], 'a system file not there yet is still protected')
  } finally {
    w.done()
  }
})

test('a further file adds to the system file, never in its place, and an edit counts from the next load', () => {
  const w = world()
  try {
    writeFileSync(w.file('system.json'), JSON.stringify({ version: 1, modes: ['workspace-write'] }))
    writeFileSync(w.file('team.json'), JSON.stringify(DENY))
    const m = new ManagedFiles({ system: w.file('system.json'), extra: [w.file('team.json')], core })
    const { policy, files } = m.load()
    assert.deepEqual(files.map((f) => f.state), ['read', 'read'])
    assert.deepEqual(policy.files, [w.file('system.json'), w.file('team.json')])
    assert.deepEqual(policy.modes, ['workspace-write'], 'the system file still speaks')
    assert.equal(policy.alwaysAllow, false)
    assert.equal(policy.deny[0].id, `${w.file('team.json')} deny[0]`)
    const d = core.decide(request({ managed: policy }), null)
    assert.equal(d.decision, 'refuse')
    assert.equal(d.managed.decided, true)
    assert.match(d.reason, /the managed policy denies read on \/h\/secrets for everyone/)
    assert.equal(m.load(), m.load(), 'unchanged files are not read again')
    writeFileSync(w.file('team.json'), JSON.stringify({ version: 1 }))
    assert.equal(core.decide(request({ managed: m.load().policy }), null).decision, 'prompt', 'the edit is read at the next load')
  } finally {
    w.done()
  }
})

test('a file that is there but cannot be used, or a named file that is not there, refuses every call naming it', () => {
  const w = world()
  try {
    mkdirSync(w.file('a-folder.json'))
    writeFileSync(w.file('bad.json'), '{"version": 1, "deny": [{"path": "~/x", "access": {"red": true}}]}')
    for (const [name, says] of [['a-folder.json', /not a regular file/], ['bad.json', /deny\[0\]\.access\.red: unknown capability/], ['missing.json', /named in the dsh-allow config but not there/]]) {
      const m = new ManagedFiles({ system: w.file('no-system.json'), extra: [w.file(name)], core })
      const { policy, files } = m.load()
      assert.equal(files[1].state, 'fault', name)
      assert.match(files[1].error, says)
      const d = core.decide(request({ command: 'ls', managed: policy }), null)
      assert.equal(d.decision, 'refuse', name)
      assert.ok(d.reason.includes(w.file(name)), `${name}: ${d.reason}`)
      assert.match(d.reason, says)
    }
  } finally {
    w.done()
  }
})

test('what the policy denies for writing no write tool writes', () => {
  const policy = core.managedPolicy([{ file: '/etc/m.json', text: JSON.stringify({ version: 1, deny: [{ path: '~/secrets', access: { write: true } }, { path: '/srv/x', recursive: false, access: { read: true } }] }) }])
  assert.match(writeDenial(policy, '/h/secrets/a.txt', '/h'), /denies write on ~\/secrets/)
  assert.match(writeDenial(policy, '/h/secrets', '/h'), /denies write/)
  assert.equal(writeDenial(policy, '/h/secretsX', '/h'), undefined)
  assert.equal(writeDenial(policy, '/srv/x', '/h'), undefined, 'a read denial is the shell\'s and the fence\'s to hold')
})

// The real system path, read by the plugin's own loader: in a mount
// namespace whose /etc is an overlay, /etc/dsh-allow/managed.json exists for
// this child alone (nothing is left in the machine's /etc).
const canNamespace = process.getuid?.() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0
test('the system file at /etc/dsh-allow/managed.json is read', { skip: canNamespace ? false : 'needs root and unshare -m for a private /etc' }, () => {
  const w = world()
  const there = existsSync('/etc/dsh-allow/managed.json')
  try {
    mkdirSync(w.file('upper')); mkdirSync(w.file('work'))
    writeFileSync(w.file('policy.json'), JSON.stringify(DENY))
    const probe = [
      `import * as core from ${JSON.stringify(join(REPO, 'pkg/core/index.js'))}`,
      `import { ManagedFiles } from ${JSON.stringify(join(REPO, 'plugin/managed.js'))}`,
      "const m = new ManagedFiles({ system: core.managedSystemFile('linux'), core })",
      'console.log(JSON.stringify(m.load()))',
    ].join('\n')
    const script = `mount --make-rprivate / && mount -t overlay overlay -o lowerdir=/etc,upperdir=${w.file('upper')},workdir=${w.file('work')} /etc ` +
      `&& mkdir -p /etc/dsh-allow && cp ${w.file('policy.json')} /etc/dsh-allow/managed.json && exec "$0" --input-type=module -e "$1"`
    const out = execFileSync('unshare', ['-m', '/bin/sh', '-c', script, process.execPath, probe], { encoding: 'utf8' })
    const load = JSON.parse(out)
    assert.deepEqual(load.files, [{ file: '/etc/dsh-allow/managed.json', state: 'read' }])
    assert.equal(load.policy.deny[0].id, '/etc/dsh-allow/managed.json deny[0]')
    assert.equal(existsSync('/etc/dsh-allow/managed.json'), there, 'the machine\'s own /etc is untouched')
  } finally {
    w.done()
  }
})
