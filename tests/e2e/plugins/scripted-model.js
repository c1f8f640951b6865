// A network-free model for end-to-end runs: provider route `stub`. Each call
// of the agent loop gets the next scripted step (one or more tool calls); when
// the script is exhausted it answers with one line per tool result, so the
// headless run's stdout says what every call did.
//
// It also plays dsh-allow's auto-reviewer: a call whose one message comes
// from the plugin `dsh-allow` gets the next scripted review answer, and what
// the reviewer was shown goes to `reviewLog`.
//
// Config: { script: [ { tool, arguments } | { calls: [{ tool, arguments }, …] } ],
//           reviews: [ 'ALLOW' | 'ASK' | 'hang' | <any answer text> ], reviewLog }

import { appendFileSync } from 'node:fs'
import { LlmAdapter } from '@deepseek-ai/dsh-llm'

export const name = 'e2e-scripted-model'
export const inject = ['llm']

function* chunksForText(text) {
  yield { type: 'block-start', index: 0, blockType: 'text' }
  yield { type: 'text-delta', index: 0, text }
  yield { type: 'block-end', index: 0, block: { type: 'text', text } }
  yield { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }
  yield { type: 'finish', reason: { kind: 'stop' } }
}

function* chunksForCalls(calls, step) {
  for (const [index, call] of calls.entries()) {
    const id = `e2e-${step}-${index}`
    const args = JSON.stringify(call.arguments)
    yield { type: 'block-start', index, blockType: 'tool-call' }
    yield { type: 'tool-call-delta', index, id, name: call.tool, argumentsDelta: args }
    yield { type: 'block-end', index, block: { type: 'tool-call', id, name: call.tool, arguments: args } }
  }
  yield { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }
  yield { type: 'finish', reason: { kind: 'tool-calls' } }
}

function resultText(block) {
  const parts = Array.isArray(block.content) ? block.content : []
  return parts.filter((c) => c.type === 'text').map((c) => c.text).join(' ').replace(/\s+/g, ' ').trim()
}

class ScriptedModel extends LlmAdapter {
  constructor(ctx, script, { reviews = [], reviewLog } = {}) {
    super()
    this.ctx = ctx
    this.script = script
    this.reviews = [...reviews]
    this.reviewLog = reviewLog
  }

  /** 'hang' never answers and ignores its signal, as a stuck provider would. */
  async *review(options) {
    const answer = this.reviews.shift() ?? 'ASK'
    const shown = options.messages.flatMap((m) => m.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n')
    if (this.reviewLog) {
      appendFileSync(this.reviewLog, `${JSON.stringify({ at: Date.now(), provider: options.provider, model: options.model, system: options.system, shown, answer })}\n`)
    }
    if (answer === 'hang') await new Promise(() => {})
    const verdicts = { ALLOW: 'the user asked for exactly this', ASK: 'not clearly asked for' }
    yield* chunksForText(answer in verdicts ? JSON.stringify({ verdict: answer, reason: verdicts[answer] }) : answer)
  }

  providerInfo(provider) {
    return { id: provider, name: 'Scripted test model' }
  }

  async listModels() {
    return [{ id: 'stub-1', name: 'stub-1' }]
  }

  async *stream(options) {
    // The reviewer's call is one message from dsh-allow; a session's own
    // turn may start with a dsh-allow notice (a workspace that is not one).
    if (options.messages?.length === 1 && options.messages[0]?.source?.plugin === 'dsh-allow' && options.messages[0].source.form === undefined) {
      yield* this.review(options)
      return
    }
    if (options.purpose !== undefined) {
      yield* chunksForText('e2e')
      return
    }
    // Let the scripted human finish what it is doing (see scripted-answerer.js).
    await this.ctx.serial('e2e/before-step')
    let step = 0
    const results = []
    for (const message of options.messages) {
      if (message.role === 'assistant') step += 1
      for (const block of message.content ?? []) if (block.type === 'tool-result') results.push(block)
    }
    const next = this.script[step]
    if (next !== undefined) {
      yield* chunksForCalls(next.calls ?? [next], step)
      return
    }
    const lines = results.map((r, i) => `#${i} ${r.isError ? 'ERROR' : 'ok'}: ${resultText(r).slice(0, 400)}`)
    yield* chunksForText([`SCRIPT DONE (${results.length} results)`, ...lines].join('\n'))
  }
}

export function apply(ctx, config) {
  ctx.effect(() => ctx.llm.registerAdapter(['stub'], new ScriptedModel(ctx, config?.script ?? [], config ?? {})), 'e2e: stub model')
}
