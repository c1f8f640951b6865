// The optional auto-reviewer (the spec's 自动复核): with `autoReview.enabled`,
// a prompt this plugin raised goes first to the session's own model, which
// may answer ALLOW (the call runs once) or ASK (the card is shown).
//
// It runs inside our approval listener (approval.js), so it only ever sees the
// prompts we raised — never a call the policy allows or refuses, never a
// `sandbox_permissions` escalation — and an ALLOW is answered as
// `allowed-once`, which binds the very same one-shot grant the card's "Allow
// once" binds, while DSH still logs its approval/asked + approval/decided
// pair. The reviewer never refuses, never writes a rule, never touches the
// store or the profile, and keeps nothing from one call to the next. What it
// is shown, its instructions and how its answer is read are the core's
// (src/review.rs); this module only makes the call and records it.
//
// ASK is the answer whenever anything is less than clear: no model route, no
// LLM service, nothing the grant would name, a timeout, an error, a cancelled
// call, an answer that is not a clear ALLOW.

/** `provider`/`model` values that mean "the session's route". */
const INHERIT = new Set(['', 'inherit'])

function given(value) {
  return typeof value === 'string' && !INHERIT.has(value.trim()) ? value.trim() : undefined
}

/**
 * The route the reviewer is called on: `autoReview.provider` + `model` from
 * the config (both or neither), else the latest `request/header` event's
 * model route (rc.8 has no `model/selection` event). Undefined when there is
 * none, or when only one of the two is configured.
 */
export function reviewRoute(autoReview, events) {
  const provider = given(autoReview?.provider)
  const model = given(autoReview?.model)
  if (provider !== undefined || model !== undefined) {
    return provider !== undefined && model !== undefined ? { provider, model } : undefined
  }
  for (let i = (events?.length ?? 0) - 1; i >= 0; i--) {
    if (events[i]?.type !== 'request/header') continue
    const config = events[i].data?.header?.config
    const ok = (v) => typeof v === 'string' && v !== ''
    return ok(config?.provider) && ok(config?.model) ? { provider: config.provider, model: config.model } : undefined
  }
  return undefined
}

export function routeText(route) {
  return route === undefined ? '' : `${route.provider}/${route.model}`
}

/**
 * The session's `user/message` events for the core, which reads only those
 * whose source is the user. Only text blocks cross: images and other blocks
 * carry no words and would only cost the crossing.
 */
function messageEvents(events) {
  return (events ?? []).filter((e) => e?.type === 'user/message').map((e) => ({
    type: e.type,
    data: {
      source: e.data?.source,
      content: (Array.isArray(e.data?.content) ? e.data.content : []).filter((b) => b?.type === 'text'),
    },
  }))
}

class Stopped extends Error {}

/**
 * One model call, raced against the timeout and the caller's signal: an
 * adapter that ignores its signal cannot hold the call past `timeoutMs`.
 * Resolves to the answer's text, or throws with a reason for the ledger.
 */
async function callModel({ llm, BlockAssembler, options, timeoutMs, signal }) {
  const controller = new AbortController()
  const stop = (why) => controller.abort(new Stopped(why))
  const timer = setTimeout(() => stop(`the reviewer did not answer within ${timeoutMs} ms`), timeoutMs)
  const onCancel = () => stop('the call was cancelled during the review')
  if (signal?.aborted) onCancel()
  signal?.addEventListener('abort', onCancel, { once: true })
  const stopped = new Promise((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true })
  })
  const collect = async () => {
    const assembler = new BlockAssembler()
    for await (const chunk of llm.stream({ ...options, signal: controller.signal })) {
      if (controller.signal.aborted) break
      assembler.push(chunk)
    }
    return assembler
  }
  try {
    if (controller.signal.aborted) throw controller.signal.reason
    const assembler = await Promise.race([collect(), stopped])
    const finish = assembler.finish
    if (finish.kind !== 'stop') {
      throw new Stopped(`the reviewer's call ended with ${finish.kind}${finish.failure?.message ? `: ${finish.failure.message}` : ''}`)
    }
    return assembler.blocks().filter((b) => b.type === 'text').map((b) => b.text).join('\n')
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onCancel)
    controller.abort(new Stopped('the review is over'))
  }
}

/**
 * Hand the record to the ledger: published like every record and written
 * in the ledger's own line shape (ledger.js knows reviews); a line that
 * cannot be written is kept against the call, which the guard then
 * refuses or runs with a warning, as for any other record.
 */
function writeReview(ledger, record) {
  ledger?.append?.(record)
}

/**
 * The reviewer for the approval listener: `review(ask, req)` resolves to
 * 'ALLOW' or 'ASK' and never throws.
 *
 * @param {object} deps
 * @param {{timeoutMs: number, provider?: string, model?: string}} deps.autoReview
 * @param {object} deps.core  buildReviewInput, reviewSystemPrompt, parseReviewAnswer, redact
 * @param {() => object | undefined} deps.llm  DSH's LLM service, if composed
 * @param {{BlockAssembler: Function, createUserMessage: Function}} deps.kit  from @deepseek-ai/dsh-llm (passed in, so
 *   this module also loads outside DSH)
 * @param {(session: object | undefined) => string} deps.workspaceOf
 * @param {object} deps.ledger
 */
export function makeReviewer({ autoReview, core, llm, kit, workspaceOf, ledger, log, onError, now = Date.now }) {
  const timeoutMs = autoReview?.timeoutMs ?? 10_000
  const redact = typeof core.redact === 'function' ? core.redact : (text) => text

  async function verdictOf(ask, req, route) {
    if (route === undefined) {
      const half = (given(autoReview?.provider) === undefined) !== (given(autoReview?.model) === undefined)
      return ['ASK', half ? 'autoReview.provider and autoReview.model go together, and only one is set' : 'there is no model route for this session']
    }
    const service = llm()
    if (service === undefined) return ['ASK', 'no LLM service is composed in this host']
    const session = req.agent?.session
    const input = core.buildReviewInput({
      command: ask.command,
      cwd: ask.cwd,
      workspace: workspaceOf(session),
      missing: ask.missing ?? [],
      events: messageEvents(session?.events),
    })
    if (input === null || input === undefined) return ['ASK', 'nothing for the reviewer to allow: no word from the user, or no permission the grant would name']
    try {
      const text = await callModel({
        llm: service,
        BlockAssembler: kit.BlockAssembler,
        timeoutMs,
        signal: req.signal,
        options: {
          provider: route.provider,
          model: route.model,
          system: core.reviewSystemPrompt(),
          maxTokens: 256,
          sessionId: session?.id,
          messages: [kit.createUserMessage({
            content: [{ type: 'text', text: JSON.stringify(input, null, 2) }],
            source: { kind: 'plugin', plugin: 'dsh-allow' },
          })],
        },
      })
      const answer = core.parseReviewAnswer(text)
      return [answer.verdict === 'ALLOW' ? 'ALLOW' : 'ASK', answer.reason]
    } catch (error) {
      return ['ASK', error instanceof Stopped ? error.message : `the reviewer's call failed: ${error?.message ?? error}`]
    }
  }

  return async function review(ask, req) {
    const started = now()
    let route
    let verdict = 'ASK'
    let reason = ''
    try {
      route = reviewRoute(autoReview, req.agent?.session?.events)
      ;[verdict, reason] = await verdictOf(ask, req, route)
    } catch (error) {
      verdict = 'ASK'
      reason = `the review failed: ${error?.message ?? error}`
    }
    const record = {
      kind: 'review', time: new Date(started).toISOString(), sessionId: ask.sessionId, callId: ask.callId,
      tool: req.toolName, command: ask.command, verdict, reason, latencyMs: Math.max(0, now() - started), route: routeText(route),
    }
    try {
      writeReview(ledger, record)
      log?.(`dsh-allow: auto-review ${verdict} for ${redact(String(ask.command))} (${record.latencyMs} ms, ${record.route || 'no route'}): ${redact(reason)}`)
    } catch (error) {
      onError?.(error)
    }
    return verdict
  }
}
