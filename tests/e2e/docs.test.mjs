// Every concrete `/allow …` form the documents show (README.md, docs/,
// ARCHITECTURE.md, CHANGELOG.md) is accepted by the real `/allow` command:
// each is typed, in the order the documents show them, into one headless DSH
// session with dsh-allow installed, and none may be answered with the
// parser's refusal (a usage line, an unknown capability or field, an invalid
// grant). An answer about the state the form met ("no rule 2", "already
// granted") is not a refusal of the form. A form that is wrong on purpose
// runs last and must be refused, so the check can fail.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MESSAGES } from '../../plugin/messages.js'
import { allowForms, documents, isTemplate } from '../node/docs.mjs'
import { cleanup, makeWorld, missingPrerequisite, runDsh } from './harness.mjs'

/** Answers about the rules the form met, not about the form (by key, in both languages). */
const STATE_ANSWERS = ['remove.missing', 'command.nosuch', 'command.duplicate']

/** A message template as a pattern: `{name}` placeholders match anything. */
function pattern(template) {
  const escaped = template.split(/\{[a-z]+\}/i).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${escaped.join('[\\s\\S]*')}$`)
}

function aboutState(text) {
  return Object.values(MESSAGES).some((dict) => STATE_ANSWERS.some((key) => pattern(dict[key]).test(text)))
}

/** Whether `/allow` refused the form itself. */
function refused(result) {
  return result?.kind === 'error' && !aboutState(result.text ?? '')
}

test('every /allow form the documents show is accepted by the real /allow command', async (t) => {
  const missing = missingPrerequisite()
  if (missing) {
    t.skip(missing)
    return
  }
  const shown = documents().flatMap((d) => allowForms(d.text).filter((f) => !isTemplate(f.form)).map((f) => ({ ...f, file: d.file })))
  const forms = [...new Map(shown.map((f) => [f.form, f])).values()]
  assert.ok(forms.length >= 10, `the documents show ${forms.length} concrete /allow forms`)
  const wrong = '/allow add read,writ ~/notes folder'
  const w = makeWorld('docs')
  try {
    const run = await runDsh(w, { commands: [...forms.map((f) => f.form), wrong], timeoutMs: 120_000 })
    const said = run.answerer.filter((x) => x.kind === 'command')
    assert.equal(said.length, forms.length + 1, `every form was answered:\n${run.stderr}\n${JSON.stringify(run.answerer)}`)
    const rejected = forms
      .map((f, i) => ({ ...f, result: said[i].result }))
      .filter((f) => refused(f.result))
      .map((f) => `${f.file}:${f.n}: ${f.form} → ${f.result.text}`)
    assert.deepEqual(rejected, [])
    assert.ok(refused(said.at(-1).result), `a wrong form is refused: ${JSON.stringify(said.at(-1).result)}`)
  } finally {
    cleanup(w)
  }
})
