// Every change to the rules file is a ledger record, whoever made it: a
// card's Always allow, `/allow` (typed, or sent through the host's API), or
// a change this process did not make — an edit by hand, another DSH
// process — noticed at the next call that reads the file. A file that can
// no longer be read is recorded too: it now reads as a fault.

/** A rule or command grant as it decides: its path(s) and what it grants. */
function keyOf(entry) {
  const access = Object.entries(entry.access ?? {}).filter(([, v]) => v === true).map(([k]) => k).sort()
  return JSON.stringify(entry.command !== undefined
    ? ['command', entry.command, entry.roots ?? [], access, entry.shape ?? 'strict']
    : ['rule', entry.path, entry.recursive !== false, access])
}

function text(entry) {
  const access = Object.entries(entry.access ?? {}).filter(([, v]) => v === true).map(([k]) => k).join(',')
  if (entry.command !== undefined) return `command grant ${entry.command} → ${(entry.roots ?? []).join(' ')}${access ? ` (${access})` : ''}`
  return `${access || 'nothing'} ${entry.path} (${entry.recursive === false ? 'file' : 'folder'})`
}

/** What `after` adds to and removes from `before` (rules and command grants). */
export function diffRules(before, after) {
  const list = (load) => [...(load?.rules ?? []), ...(load?.commands ?? [])]
  const was = new Map(list(before).map((e) => [keyOf(e), e]))
  const now = new Map(list(after).map((e) => [keyOf(e), e]))
  const added = [...now].filter(([k]) => !was.has(k)).map(([, e]) => e)
  const removed = [...was].filter(([k]) => !now.has(k)).map(([, e]) => e)
  return { added, removed }
}

/** The ledger record of one change, or undefined when nothing changed. */
export function changeRecord({ before, after, error, source, sessionId, command, time = new Date().toISOString(), seq = 0 }) {
  const base = { kind: 'rules', time, sessionId: sessionId ?? '*', callId: `rules-${Date.parse(time) || 0}-${seq}`, source }
  if (error !== undefined) {
    return { ...base, command: command ?? 'the rules file can no longer be read', reason: `${error}; every call asks until it reads whole again`, stored: [] }
  }
  const { added, removed } = diffRules(before, after)
  if (added.length === 0 && removed.length === 0) return undefined
  const what = [...added.map((e) => `+ ${text(e)}`), ...removed.map((e) => `− ${text(e)}`)].join('; ')
  const who = { card: 'Always allow on a card', command: '/allow', file: 'a change this process did not make (by hand, or another DSH process)' }[source] ?? source
  return { ...base, command: command ?? what, reason: `${who}: ${what}`, stored: added.filter((e) => e.command === undefined) }
}
