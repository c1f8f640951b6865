// What the user must hear when a session starts, not only when they ask
// (`/allow status`): a workspace dsh-allow does not take as one. DSH started
// in `/` (or in a folder above home) would otherwise hand the workspace
// baseline — read, write, create, execute — to the whole system.
//
// The notice is a `notice`-form context message from this plugin (DSH shows
// its one-line summary as a row of the transcript; the model reads it too,
// which tells it why every write will ask).

import { nodeHost } from './core.js'

/** Why this session's workspace is not taken as one, or undefined. */
export function workspaceProblem(core, workspace, home) {
  if (typeof workspace !== 'string' || typeof core.workspaceRefusal !== 'function') return undefined
  return core.workspaceRefusal(nodeHost.canonical(workspace), nodeHost.canonical(home)) ?? undefined
}

/** The `agent/session-start` listener that tells the user, once per session. */
export function sessionNotices({ core, policyOf, home, createUserMessage, log }) {
  return ({ agent }) => {
    const why = workspaceProblem(core, policyOf(agent?.session).workspaceRoot, home)
    if (why === undefined || typeof agent?.inject !== 'function') return
    const text = `dsh-allow: ${why}. This session has no workspace grant: every write, create or delete asks (a card), and rules (/allow add) work as anywhere else. Start DSH in the project's folder to work there without cards.`
    try {
      agent.inject(createUserMessage({
        content: [{ type: 'text', text }],
        source: { kind: 'plugin', plugin: 'dsh-allow', form: 'notice', summary: 'dsh-allow: no workspace grant in this session' },
      }))
    } catch (error) {
      log?.(`dsh-allow: could not tell the session about its workspace: ${error.message}`)
    }
  }
}
