// Reading the project's documents as a checker sees them: which files they
// are, the links they hold, the anchors their headings make, the `/allow`
// forms they show, and the forms the `/allow` parser's own help allows.
// Shared by tests/node/docs.test.mjs (links, commands, help) and
// tests/e2e/docs.test.mjs (every concrete form through the real command).

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MESSAGES } from '../../plugin/messages.js'

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The documents a reader is pointed to, as `{ file (repo-relative), text }`. */
export function documents(root = REPO) {
  const top = ['README.md', 'ARCHITECTURE.md', 'CHANGELOG.md'].filter((f) => existsSync(join(root, f)))
  const docs = existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)
    : []
  return [...top, ...docs].map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }))
}

/**
 * A Markdown text split into prose lines and fenced code lines, each with
 * its line number. Links and headings live in prose; a fenced block shows
 * text as it is typed.
 */
export function lines(text) {
  const out = []
  let fence
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)
    if (marker && (fence === undefined || marker[1][0] === fence[0])) {
      fence = fence === undefined ? marker[1] : undefined
      return
    }
    out.push({ n: i + 1, line, code: fence !== undefined })
  })
  return out
}

/** Inline code spans of one prose line (`a`, ``a`b``), in order. */
export function codeSpans(line) {
  const spans = []
  const re = /(`+)([\s\S]*?[^`])\1(?!`)/g
  for (let m; (m = re.exec(line)) !== null;) spans.push(m[2].trim())
  return spans
}

/** A prose line with its inline code spans blanked: links are not read inside code. */
function withoutCode(line) {
  return line.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (m) => ' '.repeat(m.length))
}

/** Every `[text](target)` and `![alt](target)` of a document: `{ n, target }`. */
export function links(text) {
  const out = []
  for (const { n, line, code } of lines(text)) {
    if (code) continue
    const re = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g
    for (let m; (m = re.exec(withoutCode(line))) !== null;) out.push({ n, target: m[1] })
  }
  return out
}

/**
 * The anchors a document offers, as GitHub makes them: each heading's text
 * lower-cased, stripped of everything but letters, digits, spaces, `-` and
 * `_`, spaces turned to `-`, a repeated one suffixed `-1`, `-2`…; and every
 * explicit `<a id="…">`.
 */
export function anchors(text) {
  const seen = new Map()
  const out = new Set()
  for (const { line, code } of lines(text)) {
    if (code) continue
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1])
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const base = heading[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    out.add(count === 0 ? base : `${base}-${count}`)
  }
  return out
}

/**
 * What is wrong with the relative links of `doc` (repo-relative path) whose
 * text is `text`: a target that does not exist, or an `#anchor` the target
 * document does not make. External links (a scheme, `//`) are not followed.
 */
export function linkProblems(doc, text, root = REPO) {
  const problems = []
  for (const { n, target } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue
    const [path, anchor] = splitAnchor(target)
    const file = path === '' ? join(root, doc) : resolve(join(root, dirname(doc)), decodeURIComponent(path))
    const where = `${doc}:${n}: ${target}`
    if (!file.startsWith(root)) {
      problems.push(`${where}: leaves the repository`)
      continue
    }
    if (!existsSync(file)) {
      problems.push(`${where}: ${relative(root, file)} does not exist`)
      continue
    }
    if (anchor === undefined) continue
    if (!file.endsWith('.md') || statSync(file).isDirectory()) {
      problems.push(`${where}: an anchor into a file that is not a Markdown document`)
      continue
    }
    const offered = file === join(root, doc) ? anchors(text) : anchors(readFileSync(file, 'utf8'))
    if (!offered.has(decodeURIComponent(anchor))) problems.push(`${where}: ${relative(root, file)} has no heading or anchor #${anchor}`)
  }
  return problems
}

function splitAnchor(target) {
  const at = target.indexOf('#')
  return at < 0 ? [target, undefined] : [target.slice(0, at), target.slice(at + 1)]
}

/**
 * Every `/allow …` form a document shows: an inline code span, or a line of
 * a fenced block, that starts with `/allow`. `\|` (a pipe escaped inside a
 * table) reads as `|`.
 */
export function allowForms(text) {
  const out = []
  for (const { n, line, code } of lines(text)) {
    const candidates = code ? [line.trim()] : codeSpans(line)
    for (const c of candidates) {
      const form = c.replace(/\\\|/g, '|').replace(/\s+/g, ' ').trim()
      if (/^\/allow(\s|$)/.test(form)) out.push({ n, form })
    }
  }
  return out
}

/** A form that stands for several (`<caps>`, `[file|folder]`, a trailing `…`), not one to type. */
export function isTemplate(form) {
  return /[<[]/.test(form) || /\s…$/.test(form)
}

/**
 * The forms the `/allow` parser's help offers (plugin/messages.js, English):
 * each usage line is a prefix and alternatives separated by ` | `, e.g.
 * `/allow command list | add <program> … | remove <n>` gives
 * `/allow command list`, `/allow command add <program> …`,
 * `/allow command remove <n>`. A trailing `  (…)` note is not part of a form.
 */
export function helpForms(messages = MESSAGES.en) {
  const forms = new Set()
  for (const [key, text] of Object.entries(messages)) {
    if (key !== 'usage' && !key.endsWith('.usage')) continue
    const usage = text.replace(/^Usage:\s*/, '').replace(/\s{2,}\(.*$/, '').trim()
    const [first, ...rest] = usage.split(' | ')
    const words = first.split(' ')
    const prefix = words.slice(0, -1).join(' ')
    for (const alternative of [words.at(-1), ...rest]) forms.add(rest.length === 0 ? usage : `${prefix} ${alternative}`)
  }
  return forms
}

/** Whether a template form is one the help offers (a trailing `…`: the start of one). */
export function helpOffers(form, offered = helpForms()) {
  if (/\s…$/.test(form)) {
    const start = form.replace(/\s…$/, '')
    return [...offered].some((f) => f === start || f.startsWith(`${start} `))
  }
  return offered.has(form)
}
