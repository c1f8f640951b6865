// Text a person reads: paths and commands as data, never as layout.
//
// A file name may hold any byte but `/` and NUL: a newline splits the card's
// text into lines the model or an attacker chose, a carriage return or an
// escape sequence rewrites what a terminal shows, and a bidirectional
// override makes `txt.exe` read as `exe.txt`. Such characters are shown
// escaped, as bash's $'…' writes them (`\n`, `\t`, `\e`, `\x7f`,
// `\u202e`), and a backslash stays a backslash: the escapes are for the
// eye, the ledger keeps the real bytes. The same table is in the Approvals
// tab (client/client.js), which loads no plugin code.

const NAMED = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\x1b': '\\e', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0' }

// C0 and C1 controls, DEL, the line and paragraph separators, and the
// bidirectional formatting characters (embeddings, overrides, isolates, marks).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g

/** `text` with every control character escaped. */
export function shown(text) {
  return String(text).replace(CONTROL, (c) => NAMED[c] ?? escapeCode(c.charCodeAt(0)))
}

function escapeCode(code) {
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}
