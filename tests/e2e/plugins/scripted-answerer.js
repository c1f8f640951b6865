// The human at the keyboard, scripted: answers approval requests from a
// queue, runs slash commands once the agent exists, and writes everything it
// saw to a JSONL log the tests read.
//
// Config:
//   log:      absolute path of the JSONL log
//   answers:  queue of 'once' | 'always' | 'reject' | 'cancel' | 'pass'
//             ('pass', or an empty queue, leaves the request unanswered:
//             DSH's own "no approval channel is available")
//   answerFor: { command: answer }, consulted before the queue: the answer
//             for the prompt of that exact command line
//   holdMs:   wait this long before answering (lets overlapping calls pile up)
//   commands: slash command lines to run once the prompt is in the session

import { appendFileSync } from 'node:fs'

export const name = 'e2e-scripted-answerer'

export function apply(ctx, config) {
  const answers = [...(config?.answers ?? [])]
  const log = (kind, data) => appendFileSync(config.log, `${JSON.stringify({ kind, at: Date.now(), ...data })}\n`)

  ctx.effect(() => ctx.on('approval/request', async (req, next) => {
    const dshAllow = ctx.get('dshAllow')
    const pending = dshAllow?.pending(req.callId)
    const byCommand = config?.answerFor ?? {}
    const answer = pending !== undefined && Object.hasOwn(byCommand, pending.command) ? byCommand[pending.command] : (answers.shift() ?? 'pass')
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

  ctx.effect(() => ctx.on('dsh-allow/decided', (record) => {
    log('decided', { record })
  }), 'e2e: decisions')

  ctx.effect(() => ctx.on('tools/result', (exec, result) => {
    const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('')
    log('result', { callId: exec.callId, name: exec.name, command: exec.arguments?.command, isError: result.isError, text, value: result.value })
  }), 'e2e: result log')

  // Commands run once the human's prompt is in the session, as when a user
  // types `/allow …` in an ongoing conversation.
  const agents = new Map()
  const ran = new Set()
  let commandsDone = Promise.resolve()
  // The scripted model waits on this before each step, so a run's commands
  // finish before its turn (and the headless process) ends.
  ctx.effect(() => ctx.on('e2e/before-step', () => commandsDone), 'e2e: step barrier')
  ctx.effect(() => ctx.on('agent/created', ({ agent }) => { agents.set(agent.session.id, agent) }), 'e2e: agents')
  ctx.effect(() => ctx.on('session/event', (session, event) => {
    const lines = config?.commands ?? []
    if (lines.length === 0 || ran.has(session.id)) return
    if (event.type !== 'user/message' || event.data?.source?.kind !== 'user') return
    const agent = agents.get(session.id)
    if (agent === undefined) return
    ran.add(session.id)
    commandsDone = (async () => {
      await null
      const commands = ctx.get('commands')
      for (const line of lines) {
        try {
          const outcome = await commands.execute(agent, line, [], AbortSignal.timeout(10_000))
          log('command', { line, result: outcome?.result ?? outcome })
        } catch (error) {
          log('command', { line, error: error.message })
        }
      }
    })()
  }), 'e2e: commands')
}
