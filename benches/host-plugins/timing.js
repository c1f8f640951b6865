// A measuring plugin for benches/host.mjs: the wall time of every tool call
// in the host, from the first `tools/pre-execute` listener to `tools/result`,
// and where it went: the pre-execute waterfall (dsh-allow's gate decides
// there), the guards up to the tool body, the body (`tools/execute`: confine,
// spawn, the command, its exit; `confine` itself timed apart) and the rest
// (post-execute, the result's content). One NDJSON line per call goes to
// $DSH_ALLOW_BENCH_OUT.
//
// Waterfall listeners registered with `prepend` run last-registered first,
// and dsh-allow registers its gate with `prepend` when it is applied. These
// listeners are registered when the first agent is created, after every
// host row has been applied, so they run ahead of the gate and the clock
// starts before anything else looks at the call; likewise `confine` is
// wrapped outside dsh-allow's own wrapper.

import { appendFileSync, readFileSync } from 'node:fs'

export const name = 'bench-timing'
export const inject = ['tools']

const now = () => process.hrtime.bigint()
const pageTablesKb = () => Number(/VmPTE:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1])
const msSince = (t0, t1) => (t0 === undefined || t1 === undefined ? undefined : Number(t1 - t0) / 1e6)

export function apply(ctx) {
  const out = process.env.DSH_ALLOW_BENCH_OUT
  if (!out) return
  const write = (record) => appendFileSync(out, `${JSON.stringify(record)}\n`)
  const calls = new Map()
  let confineNs = 0n
  let registered = false

  const preExecute = async (exec, next) => {
    const entry = { start: now() }
    calls.set(exec.callId, entry)
    const gate = await next()
    entry.preEnd = now()
    entry.gate = gate?.kind
    return gate
  }
  const execute = async (exec, next) => {
    const entry = calls.get(exec.callId)
    if (entry !== undefined) entry.bodyStart = now()
    confineNs = 0n
    try {
      return await next()
    } finally {
      if (entry !== undefined) {
        entry.bodyEnd = now()
        entry.confineNs = confineNs
      }
    }
  }

  ctx.effect(() => ctx.on('agent/created', () => {
    if (registered) return
    registered = true
    ctx.effect(() => ctx.on('tools/pre-execute', preExecute, { prepend: true }), 'bench: call start')
    ctx.effect(() => ctx.on('tools/execute', execute, { prepend: true }), 'bench: tool body')
    const sandbox = ctx.get('sandbox')
    if (sandbox !== undefined) {
      const inner = sandbox.confine
      const timed = function confine(argv, policy) {
        const t0 = now()
        try {
          return inner.call(this, argv, policy)
        } finally {
          confineNs += now() - t0
        }
      }
      sandbox.confine = timed
      ctx.effect(() => () => { if (sandbox.confine === timed) sandbox.confine = inner }, 'bench: confine timer')
    }
    // Since the host process started (performance's time origin).
    write({ kind: 'agent', atMs: performance.now() })
  }), 'bench: wait for the agent')

  ctx.effect(() => ctx.on('tools/result', (exec, result) => {
    const end = now()
    const entry = calls.get(exec.callId)
    calls.delete(exec.callId)
    if (entry === undefined) return
    const value = result?.value
    const text = (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ')
    write({
      kind: 'call',
      callId: exec.callId,
      command: exec.arguments?.command,
      totalMs: msSince(entry.start, end),
      preMs: msSince(entry.start, entry.preEnd),
      guardMs: msSince(entry.preEnd, entry.bodyStart),
      bodyMs: msSince(entry.bodyStart, entry.bodyEnd),
      confineMs: entry.confineNs === undefined ? undefined : Number(entry.confineNs) / 1e6,
      afterMs: msSince(entry.bodyEnd, end),
      gate: entry.gate,
      isError: result?.isError === true,
      exitCode: value?.exitCode,
      sandbox: value?.sandbox,
      refused: /dsh-allow: (refused|could not decide)/.test(text),
      atMs: performance.now(),
      // CLOCK_MONOTONIC in ns, as `perf record -k mono` stamps kernel events
      // (benches/host.mjs --trace lines a call's processes up with them).
      bodyStartNs: entry.bodyStart?.toString(),
      bodyEndNs: entry.bodyEnd?.toString(),
      // The host's size: fork copies its page tables and exec frees them.
      rssMb: process.memoryUsage.rss() / 2 ** 20,
      pteKb: pageTablesKb(),
    })
  }), 'bench: call end')
}
