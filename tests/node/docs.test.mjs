// The documents stay true to the repository: every relative link resolves
// (the file, and the #anchor where given), the README's two commands are the
// Makefile's and the one `.ci/run` calls, every `/allow` template the docs
// show is one the parser's own help offers, and every repository path named
// on its own in code is there. (Concrete `/allow` forms are run through the
// real command in a DSH session: tests/e2e/docs.test.mjs.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO, allowForms, codeSpans, documents, helpForms, helpOffers, isTemplate, linkProblems, lines } from './docs.mjs'

const docs = documents()

test('the README, ARCHITECTURE.md, CHANGELOG.md and docs/ are all there to check', () => {
  const files = docs.map((d) => d.file)
  for (const f of ['README.md', 'ARCHITECTURE.md', 'docs/policy.md', 'docs/fence.md', 'docs/threat-model.md', 'docs/ledger.md', 'docs/cli.md', 'docs/performance.md', 'docs/troubleshooting.md']) {
    assert.ok(files.includes(f), `${f} is missing`)
  }
})

test('the README is a start, not the whole manual: at most 250 lines', () => {
  const readme = docs.find((d) => d.file === 'README.md').text
  assert.ok(readme.split('\n').length <= 250, `README.md has ${readme.split('\n').length} lines`)
})

test('every relative link in the documents resolves, to the file and to the #anchor it names', () => {
  const problems = docs.flatMap((d) => linkProblems(d.file, d.text))
  assert.deepEqual(problems, [])
})

test('the link check fails on a missing file, a missing anchor and an anchor into another document', () => {
  const text = [
    '# Title',
    '[ok](#title) [ok too](docs/policy.md#the-precedence) [web](https://example.com/x)',
    '[gone](docs/no-such-file.md) [no heading](#no-such-heading) [wrong](docs/fence.md#not-there)',
    '`[in code](nope.md)` is not a link',
  ].join('\n')
  const problems = linkProblems('README.md', text)
  assert.equal(problems.length, 3, problems.join('\n'))
  assert.match(problems[0], /no-such-file\.md does not exist/)
  assert.match(problems[1], /#no-such-heading/)
  assert.match(problems[2], /docs\/fence\.md has no heading or anchor #not-there/)
})

test('the README\'s two commands are the ones the Makefile names and .ci/run calls', () => {
  const readme = docs.find((d) => d.file === 'README.md').text
  const makefile = readFileSync(join(REPO, 'Makefile'), 'utf8')
  const ci = readFileSync(join(REPO, '.ci', 'run'), 'utf8')
  // The commands the README gives: the `make X` lines of its fenced blocks.
  const block = readme.slice(readme.indexOf('## The two commands'))
  const shown = lines(block.slice(0, block.indexOf('\n## ', 1))).filter((l) => l.code).map((l) => /^make (\S+)/.exec(l.line.trim())?.[1]).filter(Boolean)
  assert.equal(shown.length, 2, `the README's "two commands" block shows ${shown.join(', ')}`)
  const said = /^# dsh-allow: the two commands a user needs are `make (\S+)` and `make (\S+)`/m.exec(makefile)
  assert.ok(said, 'the Makefile says which two commands a user needs')
  assert.deepEqual([...shown].sort(), [said[1], said[2]].sort(), 'the README and the Makefile name the same two')
  for (const target of shown) assert.match(makefile, new RegExp(`^${target}:`, 'm'), `the Makefile has a ${target} target`)
  const called = [...ci.matchAll(/^\s*(?:exec\s+)?make\s+(\S+)/gm)].map((m) => m[1])
  assert.deepEqual(called, ['test'], '.ci/run calls make test and nothing else')
  assert.ok(shown.includes(called[0]), 'the command CI runs is one of the README\'s two')
})

test('every /allow template the documents show is a form the parser\'s own help offers', () => {
  const offered = helpForms()
  assert.ok(offered.has('/allow add <caps> <path> [file|folder]'), `the help was read: ${[...offered].join(' ; ')}`)
  const wrong = docs.flatMap((d) => allowForms(d.text).filter((f) => isTemplate(f.form) && !helpOffers(f.form, offered)).map((f) => `${d.file}:${f.n}: ${f.form}`))
  assert.deepEqual(wrong, [])
  // Able to fail: a template the help does not offer.
  assert.equal(helpOffers('/allow add <path> <caps>', offered), false)
  assert.equal(helpOffers('/allow grant …', offered), false)
})

test('the documents show /allow forms, and the e2e suite has concrete ones to run', () => {
  const concrete = docs.flatMap((d) => allowForms(d.text)).filter((f) => !isTemplate(f.form))
  assert.ok(concrete.length >= 10, `only ${concrete.length} concrete /allow forms found`)
  assert.ok(concrete.some((f) => f.form === '/allow status'))
})

test('a repository path named on its own in code exists (history in CHANGELOG.md aside)', () => {
  const roots = /^(src|plugin|client|tests|benches|scripts|pkg-template|web-tests|wit|docs|\.ci|\.github)\//
  const missing = []
  for (const d of docs.filter((x) => x.file !== 'CHANGELOG.md')) {
    for (const { n, line, code } of lines(d.text)) {
      if (code) continue
      for (const span of codeSpans(line)) {
        if (!roots.test(span) || /[\s*{}<>…]/.test(span)) continue
        if (!existsSync(join(REPO, span.replace(/[:#].*$/, '')))) missing.push(`${d.file}:${n}: ${span}`)
      }
    }
  }
  assert.deepEqual(missing, [])
})
