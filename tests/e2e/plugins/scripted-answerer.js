// The human at the keyboard, scripted: answers approval requests from a
// queue, runs slash commands once the agent exists, and writes everything it
// saw to a JSONL log the tests read.
//
// Config:
//   log:      absolute path of the JSONL log
//   answers:  queue of 'once' | 'always' | 'reject' | 'cancel' | 'pass'
//             ('pass', or an empty queue, leaves the request unanswered:
//             DSH's own "no approval channel is available")
//   holdMs:   wait this long before answering (lets overlapping calls pile up)
//   commands: slash command lines to run right after the agent is created

import { appendFileSync } from 'node:fs'

export const name = 'e2e-scripted-answerer'

export function apply(ctx, config) {
  const answers = [...(config?.answers ?? [])]
  const log = (kind, data) => appendFileSync(config.log, `${JSON.stringify({ kind, at: Date.now(), ...data })}\n`)

  ctx.effect(() => ctx.on('approval/request', async (req, next) => {
    const dshAllow = ctx.get('dshAllow')
    const pending = dshAllow?.pending(req.callId)
    const answer = answers.shift() ?? 'pass'
    log('approval', { callId: req.callId, toolName: req.toolName, reason: req.reason, pending, answer })
    if (config?.holdMs) await new Promise((resolve) => setTimeout(resolve, config.holdMs))
    switch (answer) {
      case 'once': return 'allowed-once'
      case 'always': {
        try {
          const stored = await dshAllow.alwaysAllow(req.callId)
          log('always', { callId: req.callId, stored })
          return 'allowed-once'
        } catch (error) {
          log('always-failed', { callId: req.callId, error: error.message })
          return 'rejected'
        }
      }
      case 'reject': return 'rejected'
      case 'cancel': return 'cancelled'
      default: return next()
    }
  }), 'e2e: answerer')

  ctx.effect(() => ctx.on('tools/pre-execute', async (exec, next) => {
    log('call-start', { callId: exec.callId, name: exec.name, command: exec.arguments?.command })
    return next()
  }), 'e2e: call log')

  ctx.effect(() => ctx.on('tools/result', (exec, result) => {
    const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('')
    log('result', { callId: exec.callId, name: exec.name, command: exec.arguments?.command, isError: result.isError, text, value: result.value })
  }), 'e2e: result log')

  ctx.effect(() => ctx.on('agent/created', ({ agent }) => {
    const lines = config?.commands ?? []
    if (lines.length === 0) return
    setTimeout(async () => {
      const commands = ctx.get('commands')
      for (const line of lines) {
        try {
          const outcome = await commands.execute(agent, line, [], AbortSignal.timeout(10_000))
          log('command', { line, result: outcome?.result ?? outcome })
        } catch (error) {
          log('command', { line, error: error.message })
        }
      }
    }, 0)
  }), 'e2e: commands')
}
