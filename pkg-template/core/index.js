// dsh-allow's decision core for Node (>= 20): the wasm32 build, with the host
// questions the core asks (`canonical`, `kind`, `which`) answered by node:fs.
//
// The wasm-bindgen `nodejs` output is CommonJS and loads its .wasm
// synchronously, so this module is ready as soon as it is imported.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const wasm = require('./wasm/nodejs/dsh_allow.js');

// Every export of the core (parseRules, renderRules, version, newRuleId, and
// whatever is added later) flows through unchanged; `decide` is wrapped below.
export * from './wasm/nodejs/dsh_allow.js';

/** The real path of `p`: the deepest existing ancestor resolved through
 * symlinks, with the part that does not exist (yet) appended as spelled. */
/** lstat without throwing for the common "not there" answers (ENOENT, and
 * ENOTDIR when a file stands where a folder would be). */
function exists(p) {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

function canonical(p, links = 0) {
  const start = path.resolve(String(p));
  let head = start;
  const tail = [];
  // Walk up to the deepest existing ancestor without throwing (exceptions
  // cost more than the system calls here), then resolve it once.
  while (!exists(head)) {
    const parent = path.dirname(head);
    if (parent === head) return start;
    tail.unshift(path.basename(head));
    head = parent;
  }
  try {
    return path.join(fs.realpathSync.native(head), ...tail);
  } catch {
    // A dangling link resolves to the path it would create (`echo x > out`
    // with `out -> /elsewhere/new` writes /elsewhere/new), as the native
    // host answers; a component we may not read: as spelled.
    try {
      if (links < 40 && fs.lstatSync(head).isSymbolicLink()) {
        const target = fs.readlinkSync(head);
        const dir = canonical(path.dirname(head), links + 1);
        return canonical(path.join(path.resolve(dir, target), ...tail), links + 1);
      }
    } catch {}
    return start;
  }
}

/** What is at `p`, following symlinks: 'dir', 'file' (anything else that
 * exists, /dev/null included) or 'missing' (also for a dangling link or a
 * path the process may not stat). */
function kind(p) {
  try {
    const st = fs.statSync(String(p), { throwIfNoEntry: false });
    return st === undefined ? 'missing' : st.isDirectory() ? 'dir' : 'file';
  } catch {
    return 'missing';
  }
}

function isExecutableFile(f) {
  try {
    fs.accessSync(f, fs.constants.X_OK);
    return fs.statSync(f).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, as found there (absolute, symlinks
 * not resolved), or null. A name with a slash is not looked up. */
function which(name) {
  name = String(name);
  if (name === '' || name.includes('/')) return null;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.resolve(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** How long (ms) the answers about the policy's own roots and PATH lookups
 * may be reused. Paths a command names are always asked afresh. */
const GENERATION_MS = 1000;

/** A generation number that changes every GENERATION_MS: the core reuses its
 * prepared policy (workspace, baseline and rule roots, canonicalised) while
 * it holds; PATH lookups are cached for the same span. */
function generation() {
  return Math.floor(Date.now() / GENERATION_MS);
}

let whichCache = { generation: -1, path: '', found: new Map() };
function cachedWhich(name) {
  const g = generation();
  const pathVar = process.env.PATH ?? '';
  if (whichCache.generation !== g || whichCache.path !== pathVar) {
    whichCache = { generation: g, path: pathVar, found: new Map() };
  }
  if (!whichCache.found.has(name)) whichCache.found.set(name, which(name));
  return whichCache.found.get(name);
}

/** Reserved system trees: nothing under them is writable by a shell call (the
 * decision refuses it for everyone, the fence grants no write there), so their
 * real paths can be reused for a generation. Everything else is asked afresh. */
const SYSTEM = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/', '/lib32/'];
let canonicalCache = { generation: -1, found: new Map() };
function cachedCanonical(p) {
  p = String(p);
  if (!SYSTEM.some((root) => p.startsWith(root))) return canonical(p);
  const g = generation();
  if (canonicalCache.generation !== g) canonicalCache = { generation: g, found: new Map() };
  let real = canonicalCache.found.get(p);
  if (real === undefined) {
    real = canonical(p);
    canonicalCache.found.set(p, real);
  }
  return real;
}

/** The host the core uses by default in Node: the real file system. */
export const nodeHost = Object.freeze({ canonical: cachedCanonical, kind, which: cachedWhich, generation });

/**
 * Decide one shell call. `host` defaults to the real file system; pass
 * `null` to take paths as spelled (no symlink resolution, nothing exists).
 */
export function decide(request, host = nodeHost) {
  // JSON text crosses the wasm boundary several times faster than a JS object
  // converted field by field; the answer is the same decision.
  return JSON.parse(wasm.decideJson(JSON.stringify(request), host));
}
