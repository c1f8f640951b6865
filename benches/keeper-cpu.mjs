// The CPU time of the keeper serving a fence cache, read from its /proc
// entry: the benches count it per call on top of the runner's own.
import fs from 'node:fs'

const TICK_MS = 1000 / 100 // USER_HZ

/** The keeper `runner keep cache` (by its command line): its CPU time in ms, or undefined. */
export function keeperCpu(runner, cache) {
  const want = `${runner}\0keep\0${cache}\0`
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== want) continue
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return (Number(f[11]) + Number(f[12])) * TICK_MS
    } catch {}
  }
  return undefined
}
