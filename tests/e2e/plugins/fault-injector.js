// Faults in the middle of a session, scripted: before the scripted model's
// step N (0-based), change files on disk or run a slash command, as a disk,
// another program or the user at the keyboard would between two calls.
//
// Config:
//   log:   absolute path of the JSONL log (each action and what it returned)
//   steps: { "<N>": [ action, … ] }, where an action is one of
//          { write: PATH, text }     replace the file's bytes (a program
//                                    running, such as the runner's keeper:
//                                    a new file renamed over it, its mode kept,
//                                    as a package update does)
//          { append: PATH, text }    add bytes at its end
//          { remove: PATH }          remove it (a folder with what it holds)
//          { mkdir: PATH }           make a folder (and its parents)
//          { command: '/allow …' }   run a slash command as the user

import { appendFileSync, chmodSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'

export const name = 'e2e-fault-injector'

function replace(path, text) {
  try {
    writeFileSync(path, text)
  } catch (error) {
    if (error.code !== 'ETXTBSY') throw error
    const beside = `${path}.fault-${process.pid}`
    writeFileSync(beside, text)
    chmodSync(beside, statSync(path).mode & 0o7777)
    renameSync(beside, path)
  }
}

export function apply(ctx, config) {
  const steps = config?.steps ?? {}
  const log = (data) => appendFileSync(config.log, `${JSON.stringify({ at: Date.now(), ...data })}\n`)
  const agents = []
  let step = 0

  ctx.effect(() => ctx.on('agent/created', ({ agent }) => { agents.push(agent) }), 'e2e: fault agents')
  // The scripted model waits on this event before each of its steps.
  ctx.effect(() => ctx.on('e2e/before-step', async () => {
    const n = step
    step += 1
    for (const action of steps[String(n)] ?? []) await perform(action, n)
  }), 'e2e: faults before a step')

  async function perform(action, n) {
    try {
      if (action.write !== undefined) replace(action.write, action.text ?? '')
      else if (action.append !== undefined) appendFileSync(action.append, action.text ?? '')
      else if (action.remove !== undefined) rmSync(action.remove, { recursive: true, force: true })
      else if (action.mkdir !== undefined) mkdirSync(action.mkdir, { recursive: true })
      else if (action.command !== undefined) {
        const agent = agents[0]
        const outcome = await ctx.get('commands').execute(agent, action.command, [], AbortSignal.timeout(10_000))
        log({ step: n, action, result: outcome?.result ?? outcome })
        return
      }
      log({ step: n, action, done: true })
    } catch (error) {
      log({ step: n, action, error: error.message })
    }
  }
}
