// benches/floor.c built static (musl where there is one: glibc's static
// start probes the CPU, which a VM traps), for the benches that set the
// runner against it and for its test.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'floor.c')

/** Build the floor at `out`; throws when no compiler here builds it. */
export function buildFloor(out) {
  for (const [cc, flags] of [['musl-gcc', ['-static']], ['cc', ['-static']], ['cc', []]]) {
    if (spawnSync(cc, ['-O2', ...flags, SOURCE, '-o', out], { stdio: 'ignore' }).status === 0) return out
  }
  throw new Error('benches/floor.c does not build here (musl-gcc or cc)')
}
