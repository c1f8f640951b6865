// The Linux probe against the real runner and kernel: which capabilities the
// fence holds, whether a repository's hooks are shut (persistence), and
// whether modes, times and xattrs outside the writable roots are (metadata).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { persistenceOf, probeLinuxRunner } from '../../plugin/fence.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const RUNNER = join(ROOT, 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
const skip = process.platform !== 'linux' ? 'the runner is Linux-only' : !existsSync(RUNNER) ? `no runner at ${RUNNER} (make build)` : false

/** Outside the temp folders, which the baseline opens whole. */
function scratch(t) {
  const parent = join(homedir(), '.cache', 'dsh-allow-tests')
  mkdirSync(parent, { recursive: true })
  const dir = mkdtempSync(join(parent, 'probe-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('the probe finds the full fence and the repository hooks shut', { skip }, async (t) => {
  const status = await probeLinuxRunner({ runner: RUNNER, scratchParent: scratch(t), enforce: 'full' })
  assert.equal(status.level, 'full', JSON.stringify(status))
  assert.equal(status.persistence.state, 'shut', JSON.stringify(status.persistence))
  assert.equal(persistenceOf(status), 'shut')
  // The probe's chmod outside every writable root met the read-only tree.
  assert.equal(status.metadata.state, 'fenced', JSON.stringify(status.metadata))
})

test('a runner told not to shut them is reported open, and the decision is told so', { skip }, async (t) => {
  const status = await probeLinuxRunner({ runner: RUNNER, scratchParent: scratch(t), enforce: 'full', persistence: 'open' })
  assert.equal(status.level, 'full')
  assert.equal(status.persistence.state, 'open')
  assert.equal(persistenceOf(status), 'open')
  assert.equal(persistenceOf(undefined), 'open', 'no probe yet: open, so hidden code in a repository asks')
  assert.equal(status.metadata.state, 'open', 'no mount namespace, no read-only tree')
})
