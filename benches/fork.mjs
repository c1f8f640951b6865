// What the size of a Node process costs each child it starts: the wall time
// of spawning `/bin/true` and seeing it exit, as the process holds more
// memory (touched, like a heap or compiled code). The DSH host starts a
// child for every bash call, so every MiB a plugin adds to the host is paid
// again on every call; this is why dsh-allow keeps its share of the host
// small (docs/performance.md).
//
//   node benches/fork.mjs [spawns per step]   (default 60)

import { spawn } from 'node:child_process'

const perStep = Number(process.argv[2] ?? 60)
const rssMiB = () => process.memoryUsage.rss() / 2 ** 20
const held = []

async function spawnToExit() {
  const times = []
  for (let i = 0; i < perStep; i++) {
    const t0 = process.hrtime.bigint()
    await new Promise((resolve, reject) => spawn('/bin/true', [], { stdio: 'ignore' }).on('exit', resolve).on('error', reject))
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

console.log(`spawn of /bin/true to its exit, median of ${perStep}, Node ${process.version}, load ${(await import('node:os')).loadavg()[0].toFixed(2)}`)
console.log('| process RSS | spawn to exit |')
console.log('|---|---|')
const steps = []
for (let step = 0; step <= 6; step++) {
  if (step > 0) {
    // 25 MiB more, every page written (untouched memory costs nothing).
    for (let k = 0; k < 25; k++) held.push(new Uint8Array(2 ** 20).fill(1))
  }
  const median = await spawnToExit()
  const rss = rssMiB()
  steps.push({ rss, median })
  console.log(`| ${rss.toFixed(0)} MiB | ${median.toFixed(2)} ms |`)
}
const [first, last] = [steps[0], steps.at(-1)]
console.log(`slope: ${((last.median - first.median) / (last.rss - first.rss)).toFixed(3)} ms per MiB held`)
