// A network-free model for end-to-end runs: provider route `stub`. Each call
// of the agent loop gets the next scripted step (one or more tool calls); when
// the script is exhausted it answers with one line per tool result, so the
// headless run's stdout says what every call did.
//
// Config: { script: [ { tool, arguments } | { calls: [{ tool, arguments }, …] } ] }

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
  constructor(ctx, script) {
    super()
    this.ctx = ctx
    this.script = script
  }

  providerInfo(provider) {
    return { id: provider, name: 'Scripted test model' }
  }

  async listModels() {
    return [{ id: 'stub-1', name: 'stub-1' }]
  }

  async *stream(options) {
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
  ctx.effect(() => ctx.llm.registerAdapter(['stub'], new ScriptedModel(ctx, config?.script ?? [])), 'e2e: stub model')
}
