// The macOS half of confine: the core compiles the Seatbelt profile, paths go
// to sandbox-exec as -D parameters, and only /usr/bin/sandbox-exec runs.
// (Runs anywhere: the core is pure, and nothing is executed here.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { makePlanner, seatbeltArgv, wrapConfine } from '../../plugin/confine.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const core = await import(join(ROOT, 'pkg', 'core', 'index.js'))

const fence = (level) => ({ current: () => ({ level, enforcement: level === 'full' ? 'full' : 'partial' }) })
const policy = { mode: 'workspace-write', workspaceRoot: '/Users/me/project', sessionId: 's1' }
const profileFor = (p, command, enforce) => ({
  workspace: p.workspaceRoot, home: '/Users/me', harnessHome: '/Users/me/.dsh', platform: 'macos', mode: p.mode,
  rules: [{ path: '/Users/me/project/build', recursive: true, access: { delete: true } }], grants: [],
  protectedFiles: ['/Users/me/.dsh/dsh-allow.json'], enforce, command,
})

test('the sandbox-exec argv: fixed profile text, one -D per parameter, then the command', () => {
  const argv = seatbeltArgv({ text: '(version 1)', params: [['P0', '/Users'], ['P1', '/a b']] }, ['bash', '-c', 'rm -rf build'])
  assert.deepEqual(argv, ['/usr/bin/sandbox-exec', '-p', '(version 1)', '-D', 'P0=/Users', '-D', 'P1=/a b', 'bash', '-c', 'rm -rf build'])
})

test('on macOS the planner compiles the profile with the core and hands back sandbox-exec', () => {
  const seen = []
  const compileProfile = (request, host) => {
    seen.push({ request, host })
    return core.compileProfile(request, host)
  }
  const host = { canonical: (p) => p, kind: () => 'missing', which: () => null }
  const plan = makePlanner({ platform: 'macos', fence: fence('guarded'), runner: '/nope', profileFor, compileProfile, host })
  const out = plan(['bash', '-c', 'rm -rf build'], policy)
  assert.equal(out.argv[0], '/usr/bin/sandbox-exec')
  assert.equal(out.argv[1], '-p')
  assert.match(out.argv[2], /\(version 1\)/)
  assert.deepEqual(out.argv.slice(-3), ['bash', '-c', 'rm -rf build'])
  const params = out.argv.slice(3, -3)
  assert.ok(params.length > 0 && params.length % 2 === 0)
  for (let i = 0; i < params.length; i += 2) {
    assert.equal(params[i], '-D')
    assert.match(params[i + 1], /^[A-Za-z0-9_]+=.+/)
  }
  // Paths are parameters, never spliced into the profile text.
  assert.ok(!out.argv[2].includes('/Users/me/project/build'), 'the rule path is a parameter')
  assert.ok(params.some((p) => p.endsWith('=/Users/me/project/build')))
  assert.equal(seen[0].host, host)
  assert.equal(seen[0].request.command, 'rm -rf build')
  assert.deepEqual(out.denialSignatures, [])
})

test('the fence off, full access or a platform without a runner: the original provider confines', () => {
  const compileProfile = () => { throw new Error('must not compile') }
  const off = makePlanner({ platform: 'macos', fence: fence('off'), profileFor, compileProfile })
  assert.equal(off(['bash', '-c', 'ls'], policy), undefined)
  const on = makePlanner({ platform: 'macos', fence: fence('guarded'), profileFor, compileProfile })
  assert.equal(on(['bash', '-c', 'ls'], { ...policy, mode: 'danger-full-access' }), undefined)
  const sandbox = { confine: () => ({ argv: ['original'] }) }
  const undo = wrapConfine(sandbox, off)
  assert.deepEqual(sandbox.confine(['bash', '-c', 'ls'], policy).argv, ['original'])
  undo()
})

test('a profile that does not compile throws: it is never replaced by a wider one', () => {
  const compileProfile = () => { throw new Error('profile request: missing field `workspace`') }
  const plan = makePlanner({ platform: 'macos', fence: fence('guarded'), profileFor, compileProfile })
  assert.throws(() => plan(['bash', '-c', 'ls'], policy), /missing field/)
})

test('variables that name code, taken from the workspace\'s .env, are removed in front of the command, on both platforms', async () => {
  const { fromProjectEnv, withoutVariables } = await import('../../plugin/launch.js')
  // DSH's launch environment: which layer supplied each value.
  const layers = { PORT: 'project-env', GIT_CONFIG_PARAMETERS: 'project-env', OPENSSL_CONF: 'project-env', EDITOR: 'process', PERLLIB: 'user-env' }
  const launch = { get: (name) => (layers[name] ? { value: 'x', source: layers[name] } : undefined) }
  const env = { PORT: '3000', GIT_CONFIG_PARAMETERS: 'x', OPENSSL_CONF: '/w/evil.cnf', EDITOR: 'vim', PERLLIB: '/x', HOME: '/h' }
  const taken = fromProjectEnv(launch, env)
  assert.deepEqual(taken, ['GIT_CONFIG_PARAMETERS', 'OPENSSL_CONF', 'PORT'], 'only what the workspace .env supplied')
  const unset = core.codeVariables(taken)
  assert.deepEqual(unset, ['GIT_CONFIG_PARAMETERS', 'OPENSSL_CONF'], 'a plain value (PORT) stays')
  assert.deepEqual(withoutVariables(['bash', '-c', 'git status'], unset), ['/usr/bin/env', '-u', 'GIT_CONFIG_PARAMETERS', '-u', 'OPENSSL_CONF', 'bash', '-c', 'git status'])
  assert.deepEqual(withoutVariables(['bash', '-c', 'ls'], []), ['bash', '-c', 'ls'], 'nothing to remove: the argv as DSH gave it')
  assert.deepEqual(fromProjectEnv(undefined, env), [], 'no launch environment (an older host): nothing is known to come from a .env')

  const compileProfile = (request, host) => core.compileProfile(request, host)
  const host = { canonical: (p) => p, kind: () => 'missing', which: () => null }
  const plan = makePlanner({ platform: 'macos', fence: fence('guarded'), runner: '/nope', profileFor, compileProfile, host, unset })
  const out = plan(['bash', '-c', 'git status'], policy)
  assert.deepEqual(out.argv.slice(-8), ['/usr/bin/env', '-u', 'GIT_CONFIG_PARAMETERS', '-u', 'OPENSSL_CONF', 'bash', '-c', 'git status'])
  const linux = makePlanner({ platform: 'linux', fence: fence('full'), runner: '/opt/dsh-allow', profileFor, unset })
  const run = linux(['bash', '-c', 'git status'], policy)
  assert.deepEqual(run.argv.slice(run.argv.indexOf('--') + 1), ['/usr/bin/env', '-u', 'GIT_CONFIG_PARAMETERS', '-u', 'OPENSSL_CONF', 'bash', '-c', 'git status'])
})
