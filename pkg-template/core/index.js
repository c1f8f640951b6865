// dsh-allow's decision core for Node (>= 20): the wasm32 build, with the host
// questions the core asks (`canonical`, `kind`, `which`) answered by node:fs.
//
// The wasm-bindgen `nodejs` output is CommonJS and loads its .wasm
// synchronously, so this module is ready as soon as it is imported.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const wasm = require('./wasm/nodejs/dsh_allow.js');

// Every export of the core flows through unchanged; `decide` is wrapped
// below. Named one by one rather than `export * from` the CommonJS glue:
// that makes Node scan the glue's source for its exports (cjs-module-lexer),
// ~14 ms of every process's start (tests/node/package.test.mjs checks that
// none is missing).
export const {
  buildReviewInput, codeVariables, commandGrantPrompt, compileProfile, decideIn, decideJson, describeManaged, explainDenials, foldLedger,
  foldLedgerJson, managedPolicy, managedRuleCheck, managedSystemFile, newRuleId, parseReviewAnswer, parseRules, redact, renderRules, resolveMode,
  reviewSystemPrompt, version, withheldAt, workspaceRefusal,
} = wasm;

/** How long (ms) reused answers go at most without every folder behind them
 * being looked at again (`stat`), whatever else vouches for them. */
const GENERATION_MS = 1000;

/** Folders met on the way to a named path, by real parent + name, for the
 * current generation (and its named part, below). The named component
 * itself is always looked up afresh. */
let folders = { generation: -1, named: -1, real: new Map(), outside: new Set() };
/** The same for the policy's roots and PATH (the root tier, below). */
let rootFolders = { generation: -1, real: new Map(), outside: new Set() };

/**
 * What the reused answers (these folders, the core's prepared policy with
 * its workspace, baseline and rule roots, PATH lookups) were read from: each
 * lookup of a name in a folder — a *step* — and what it answered (missing, a
 * folder, a file, a link and its text; for a PATH candidate, whether it may
 * run). A generation holds while every step would answer the same; then
 * everything derived from the steps is the same too.
 *
 * Proving it is checked after a tool call (`invalidate()`) and at least once
 * a second. A folder whose entries did not change needs none of its steps
 * looked up again; it is vouched for by
 *  - its identity and times (`stat`): making, removing or renaming an entry
 *    (a link swapped for a folder included) changes its folder's mtime and
 *    ctime. Times are coarse, so a folder changed within the second before
 *    it was read is not vouched for this way (nor a PATH candidate's mode,
 *    which changes the file's times, not the folder's);
 *  - else its steps are looked up again, and the generation ends only if one
 *    answers differently.
 * A watcher thread (inotify) once spared those `stat`s after a quiet tool
 * call, but it cost the host more than it saved: a Node worker adds ~14 MiB
 * to the host process, and on this kind of VM every MiB costs ~0.12 ms in
 * each fork the host makes to run a tool call (docs/performance.md).
 * Pseudo file systems, whose folders do not record new entries, are never
 * vouched for.
 *
 * Steps come in two tiers. What the core keeps for the generation (its
 * prepared policy, PATH and what it found there) is read only through the
 * *root* tier: the policy's roots and PATH lookups walk a cache of their
 * own and record their steps apart. Everything else (the folders on the way
 * to the paths a command names) is the *named* tier, which a decision uses
 * only through the questions it replays before it is reused. So a step of
 * the named tier that answers differently (a command made `build/`, which
 * the last one named as missing on its way to `build/x`) ends only the
 * named tier: its steps and folders are forgotten and looked up again, and
 * the generation — the prepared policy — holds. A root step that answers
 * differently ends the generation.
 */
const MAX_FOLDERS = 128;
const UNTRACKED = ['/proc', '/sys', '/dev/pts'];
let gen = newGeneration(0);
let dirty = false;
/** When every folder was last proven. */
let provedAt = -Infinity;

function newGeneration(id) {
  return { id, named: 0, folders: new Map(), unprovable: false, namedUnprovable: false, path: process.env.PATH };
}

/** Whether the walk under way is the root tier's (see above). */
let rootTier = false;
function inRootTier(f) {
  const before = rootTier;
  rootTier = true;
  try {
    return f();
  } finally {
    rootTier = before;
  }
}

/** What cannot be proven ends the tier it was read for. */
function unprovable() {
  if (rootTier) gen.unprovable = true;
  else gen.namedUnprovable = true;
}

/** The folder's identity and times, or why there are none. Plain numbers,
 * no BigInts and no key text: a generation's proof stamps every folder it
 * holds after each tool call, and the bigint form made ~30 KB of garbage a
 * decide, which grows the host's young generation (and every MiB the host
 * holds is paid again in each fork it makes to run a call). Times in
 * milliseconds keep ~0.25 µs: a folder is vouched for only when its times
 * were over a second old when read, so a later change moves ctime by far
 * more than that. */
function stamp(dir) {
  let st;
  try {
    st = fs.statSync(dir, { throwIfNoEntry: false });
  } catch {
    return UNREADABLE;
  }
  if (st === undefined) return NO_FOLDER;
  const now = Date.now();
  return { dev: st.dev, ino: st.ino, mtime: st.mtimeMs, ctime: st.ctimeMs, recent: now - st.mtimeMs < 1000 || now - st.ctimeMs < 1000 };
}
const UNREADABLE = Object.freeze({ dev: -1, ino: -1, mtime: 0, ctime: 0, recent: false });
const NO_FOLDER = Object.freeze({ dev: -2, ino: -2, mtime: 0, ctime: 0, recent: false });

function sameStamp(a, b) {
  return a.dev === b.dev && a.ino === b.ino && a.mtime === b.mtime && a.ctime === b.ctime;
}

/** A name is about to be looked up in `dir` and the answer reused: the
 * folder's record (its times taken before the lookup), or undefined when
 * nothing is kept for it. Pseudo file systems are never vouched for; the
 * reserved system trees are not tracked (what is read there is reused for
 * STABLE_MS regardless, see SYSTEM) unless `always`: a link there may lead
 * out of them. */
function tracked(dir, always = false) {
  if (!always && isSystem(dir)) return undefined;
  let f = gen.folders.get(dir);
  if (f !== undefined) return f;
  if (UNTRACKED.some((root) => under(dir, root))) {
    unprovable();
    return undefined;
  }
  const s = stamp(dir);
  // `modes`: the steps that ask an entry's mode, which its folder's times
  // do not show (asked again at every proof), made when the first is kept.
  f = { dir, stamp: s, hot: s.recent, steps: new Map(), rootSteps: new Map(), modes: undefined };
  gen.folders.set(dir, f);
  return f;
}

/** Keep what looking up `name` in the folder `f` answered, in the tier
 * under way. The first answer is the one in use; a later one that differs
 * means the folder changed in between, which the generation cannot vouch
 * for. */
function record(f, name, answer) {
  if (f !== undefined) keep(rootTier ? f.rootSteps : f.steps, name, answer);
}

/** Keep whether the PATH candidate `name` in the folder `f` may run. Apart
 * from the lookups by the call, not by the name: any name is a file's. */
function recordMode(f, name, answer) {
  if (f !== undefined) keep((f.modes ??= new Map()), name, answer);
}

function keep(steps, name, answer) {
  const before = steps.get(name);
  if (before === undefined) steps.set(name, answer);
  else if (before !== answer) unprovable();
}

/** What is at `p` (not following a link): 'missing', 'dir', 'file',
 * 'proc' (a link in /proc, never followed) or 'L' + the link's text. */
function lookup(p) {
  const st = lstat(p);
  if (st === undefined) return 'missing';
  if (!st.isSymbolicLink()) return st.isDirectory() ? 'dir' : 'file';
  if (under(p, '/proc')) return 'proc';
  try {
    return `L${fs.readlinkSync(p)}`;
  } catch {
    return 'L?';
  }
}

/** Whether the file `f` (no link) may run: 'x', 'nx' or 'missing'. */
function runnable(f) {
  try {
    const st = fs.statSync(f, { throwIfNoEntry: false });
    if (st === undefined) return 'missing';
    if (!st.isFile()) return 'nx';
    fs.accessSync(f, fs.constants.X_OK);
    return 'x';
  } catch {
    return 'nx';
  }
}

/** Every PATH candidate of the folder `f` is still as runnable as it was:
 * its mode, which the folder's times do not show. Kept apart from the
 * lookups: a PATH folder holds a lookup for every program looked up
 * before it was found further on (~90 here), which a still folder need not
 * walk. */
function sameModes(f) {
  if (f.modes === undefined) return true;
  const base = f.dir === '/' ? '' : f.dir;
  let same = true;
  f.modes.forEach((answer, name) => {
    if (same && runnable(`${base}/${name}`) !== answer) same = false;
  });
  return same;
}

/** Every lookup in `steps` (of the folder `f`) answers as it did. */
function sameSteps(f, steps) {
  const base = f.dir === '/' ? '' : f.dir;
  let same = true;
  steps.forEach((answer, name) => {
    if (same && lookup(`${base}/${name}`) !== answer) same = false;
  });
  return same;
}

/** What still holds of the generation (see above): 'same', 'named' (a
 * named step answers differently, or could not be proven: the named tier
 * ends) or 'root' (the generation ends). */
function proven() {
  if (gen.unprovable || gen.folders.size > MAX_FOLDERS || gen.path !== process.env.PATH) return 'root';
  let held = gen.namedUnprovable ? 'named' : 'same';
  for (const f of gen.folders.values()) {
    const s = stamp(f.dir);
    const still = sameStamp(s, f.stamp) && !f.hot;
    if (!sameModes(f)) return 'root';
    if (still) continue;
    if (!sameSteps(f, f.rootSteps)) return 'root';
    if (held === 'same' && !sameSteps(f, f.steps)) held = 'named';
    f.stamp = s;
    f.hot = s.recent;
  }
  return held;
}

/** The named tier ends: its steps are forgotten (and folders that held
 * nothing else), and its walks start again from nothing. */
function forgetNamed() {
  for (const [dir, f] of gen.folders) {
    f.steps.clear();
    if (f.rootSteps.size === 0 && f.modes === undefined) gen.folders.delete(dir);
  }
  gen.namedUnprovable = false;
  gen.named += 1;
}

/** A tool call ran: what was read so far is checked before it is reused. */
export function invalidate() {
  dirty = true;
}

function lstat(p) {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    // ENOTDIR (a file where a folder would be), EACCES: nothing usable there.
    return undefined;
  }
}

const MAX_LINKS = 40;
const MISSING = Symbol('missing');

/** `dir/name` where `dir` is real: a link is followed to where it lands;
 * MISSING when nothing is there. `kept`: the answer is reused later (a
 * folder on the way, a policy root), so the step is recorded. */
function child(dir, name, state, kept = true) {
  const here = dir === '/' ? `/${name}` : `${dir}/${name}`;
  const f = kept ? tracked(dir) : undefined;
  if (!isSystem(here)) state.outside = true;
  let answer = lookup(here);
  // A link may lead out of the system trees (to /etc, home…): the folder
  // holding it is recorded even there, and looked up again once its times
  // are taken.
  if (kept && f === undefined && answer[0] === 'L') {
    const held = tracked(dir, true);
    if (held !== undefined) {
      answer = lookup(here);
      record(held, name, answer);
    }
  }
  record(f, name, answer);
  if (answer === 'missing') {
    state.last = { path: here, kind: 'missing' };
    return MISSING;
  }
  if (answer === 'dir' || answer === 'file') {
    state.last = { path: here, kind: answer };
    return here;
  }
  // Links in /proc say where things are for the process that reads them
  // (/proc/self, /proc/<pid>/cwd, root, fd/N): for this Node process, not for
  // the shell that will run. Kept as spelled; the core does not judge a path
  // through them by its text.
  if (answer === 'proc') {
    state.outside = true;
    return here;
  }
  if (state.links >= MAX_LINKS || answer === 'L?') return here;
  state.links += 1;
  const target = answer.slice(1);
  return walk(target.startsWith('/') ? '/' : dir, target, state, false);
}

/** Resolve `rel` from the real folder `base`, component by component (a
 * `..` after a link climbs from where the link landed, as the kernel does);
 * past the first missing component the rest is appended as spelled. With
 * `fresh`, the last component is looked up now, never from the cache. */
function walk(base, rel, state, fresh, root = false) {
  const parts = rel.split('/').filter((s) => s !== '' && s !== '.');
  const cache = rootTier ? rootFolders : folders;
  let cur = base;
  let missing = false;
  parts.forEach((seg, i) => {
    if (seg === '..') {
      cur = path.dirname(cur);
      return;
    }
    const spelled = cur === '/' ? `/${seg}` : `${cur}/${seg}`;
    if (missing) {
      cur = spelled;
      return;
    }
    let real;
    if (fresh && i === parts.length - 1) {
      real = child(cur, seg, state, root);
    } else {
      real = cache.real.get(spelled);
      if (real === undefined) {
        // Whether a link on the way to this folder led out of the system
        // trees is kept with it: a later walk through the cached folder
        // must not take a system path for stable when it is not.
        const before = state.outside;
        state.outside = false;
        real = child(cur, seg, state);
        cache.real.set(spelled, real);
        if (state.outside) cache.outside.add(spelled);
        state.outside ||= before;
      } else if (cache.outside.has(spelled)) {
        state.outside = true;
      }
    }
    if (real === MISSING) {
      missing = true;
      state.missing = true;
      cur = spelled;
    } else {
      cur = real;
    }
  });
  return cur;
}

/** The folders cache of the current generation. */
function currentFolders() {
  const g = generation();
  if (folders.generation !== g || folders.named !== gen.named) folders = { generation: g, named: gen.named, real: new Map(), outside: new Set() };
  if (rootFolders.generation !== g) rootFolders = { generation: g, real: new Map(), outside: new Set() };
}

/** The real path of `p`: symlinks resolved along the existing part, the part
 * that does not exist (yet) appended as spelled; a dangling link resolves to
 * the path it would create, as the native host answers. */
function canonical(p, seen, root = false) {
  currentFolders();
  const state = { links: 0, last: undefined, outside: false, missing: false };
  const real = walk('/', path.resolve(String(p)), state, true, root);
  // What the final lookup found is what is at `p` (links followed), when
  // it was a lookup of the real path itself.
  if (seen !== undefined && state.last?.path === real) seen.kind = state.last.kind;
  if (seen !== undefined) seen.outside = state.outside;
  return real;
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

/** The first executable `name` on PATH, as found there (absolute, symlinks
 * not resolved), or null. A name with a slash is not looked up. Each
 * candidate is resolved like a folder on the way to a named path (its PATH
 * folder and any link followed are steps), and whether the file it lands on
 * may run is a step in the folder that file is really in. */
function which(name, pathVar = process.env.PATH ?? '') {
  name = String(name);
  if (name === '' || name.includes('/')) return null;
  currentFolders();
  for (const dir of pathVar.split(path.delimiter)) {
    if (dir === '') continue;
    const state = { links: 0, last: undefined, outside: false, missing: false };
    const real = walk('/', path.join(path.resolve(dir), name), state, false);
    if (state.missing) continue;
    const answer = runnable(real);
    const at = real.lastIndexOf('/');
    recordMode(tracked(real.slice(0, at) || '/'), real.slice(at + 1), answer);
    if (answer === 'x') return path.resolve(dir, name);
  }
  return null;
}

/** The generation number: the core reuses its prepared policy (workspace,
 * baseline and rule roots, canonicalised) and PATH answers while it holds. */
function generation() {
  const now = Date.now();
  const due = now - provedAt >= GENERATION_MS;
  if (!dirty && !due) return gen.id;
  const held = proven();
  if (held === 'root') gen = newGeneration(gen.id + 1);
  else if (held === 'named') forgetNamed();
  provedAt = now;
  dirty = false;
  return gen.id;
}

// PATH is read once per generation: `process.env` is a slow property bag.
let whichCache = { generation: -1, path: '', found: new Map() };
function cachedWhich(name) {
  const g = generation();
  if (whichCache.generation !== g) whichCache = { generation: g, path: process.env.PATH ?? '', found: new Map() };
  if (!whichCache.found.has(name)) whichCache.found.set(name, inRootTier(() => which(name, whichCache.path)));
  return whichCache.found.get(name);
}

/** Reserved system trees: nothing under them is writable by a shell call (the
 * decision refuses it for everyone, the fence grants no write there), and
 * only the system's own updates change them, so their real paths are reused
 * for STABLE_MS, across tool calls. Everything else is asked afresh. */
const STABLE_MS = 60_000;
// Not /proc or /sys: their links lead anywhere (/proc/<pid>/cwd, /root).
const SYSTEM =
  process.platform === 'darwin'
    ? ['/System', '/bin', '/sbin', '/usr']
    : ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/boot'];
// /System/Volumes/Data holds the writable data volume on macOS.
const SYSTEM_HOLES = ['/usr/local', '/System/Volumes'];
const under = (p, root) => p === root || (p.startsWith(root) && p[root.length] === '/');
// A spelling with `.` or `..` segments may climb out: it is not one of them.
const isSystem = (p) =>
  SYSTEM.some((root) => under(p, root)) && !SYSTEM_HOLES.some((hole) => under(p, hole)) && !/\/\.\.?(\/|$)/.test(p);
let canonicalCache = { until: -1, found: new Map() };
function cachedCanonical(p, seen) {
  p = String(p);
  if (!isSystem(p)) return canonical(p, seen);
  const now = Date.now();
  if (now >= canonicalCache.until) canonicalCache = { until: now + STABLE_MS, found: new Map() };
  let real = canonicalCache.found.get(p);
  if (real === undefined) {
    const info = seen ?? {};
    real = canonical(p, info);
    // Kept only when no link led out of the system trees on the way.
    if (!info.outside) canonicalCache.found.set(p, real);
  }
  return real;
}

/** The answers about `p` within the current decide (see `scope`). */
function scoped(p) {
  let entry = scope.get(p);
  if (entry === undefined) {
    entry = { real: undefined, kind: undefined };
    scope.set(p, entry);
  }
  if (entry.real === undefined) entry.real = cachedCanonical(p, entry);
  return entry;
}

/** The named-path questions of the decide being made, with their answers
 * (question, path, answer, …), for `decisions`. */
let recording = null;

function hostCanonical(p) {
  const real = scope === null ? cachedCanonical(p) : scoped(String(p)).real;
  recording?.push(0, String(p), real);
  return real;
}

function hostKind(p) {
  let answer;
  if (scope === null) {
    answer = kind(p);
  } else {
    const entry = scoped(String(p));
    entry.kind ??= kind(p);
    answer = entry.kind;
  }
  recording?.push(1, String(p), answer);
  return answer;
}

/** A root of the policy (workspace, baseline and rule roots): asked when the
 * core prepares its policy, which it keeps for the generation, so the folder
 * it is found in is tracked like the folders on the way. */
function rootCanonical(p) {
  p = String(p);
  return inRootTier(() => (isSystem(p) ? cachedCanonical(p) : canonical(p, undefined, true)));
}

/** The host the core uses by default in Node: the real file system. */
export const nodeHost = Object.freeze({
  canonical: hostCanonical,
  canonicalRoot: rootCanonical,
  kind: hostKind,
  which: cachedWhich,
  generation,
});

/** The context (the request without `command` and `cwd`) the core holds,
 * as JSON read back: a plain copy that later changes to the caller's objects
 * cannot reach. `undefined`: the core holds none we can vouch for. */
let sentContext;
/** The context's fields as they were sent, by key, those frozen all the way
 * down only: such a field, handed again as the same object, is unchanged
 * (a store of 10,000 rules is not compared rule by rule on every call). */
let sentFrozen = new Map();
/** Objects proven frozen all the way down. */
const deeplyFrozen = new WeakSet();

function isDeeplyFrozen(value) {
  if (value === null || typeof value !== 'object') return true;
  if (deeplyFrozen.has(value)) return true;
  if (!Object.isFrozen(value) || typeof value.toJSON === 'function') return false;
  for (const v of Object.values(value)) if (!isDeeplyFrozen(v)) return false;
  deeplyFrozen.add(value);
  return true;
}

/** `sameJson` for the context, field by field, a field sent frozen and
 * handed again as the same object counting as the same. */
function sameContext(copy, context) {
  if (copy === null || typeof copy !== 'object') return false;
  let n = 0;
  for (const key of Object.keys(context)) {
    const v = context[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!Object.hasOwn(copy, key)) return false;
    if (!(sentFrozen.get(key) === v && v !== null && typeof v === 'object') && !sameJson(copy[key], v)) return false;
    n += 1;
  }
  return n === Object.keys(copy).length;
}

/** Whether `value` serialises to the same JSON as `copy` (a JSON-parsed
 * copy). Anything JSON would transform (toJSON, non-finite numbers,
 * undefined in arrays) counts as different and is simply sent again. */
function sameJson(copy, value) {
  if (value === null || typeof value !== 'object') {
    return copy === value && (typeof value !== 'number' || Number.isFinite(value));
  }
  if (copy === null || typeof copy !== 'object' || typeof value.toJSON === 'function') return false;
  if (Array.isArray(value)) {
    if (!Array.isArray(copy) || copy.length !== value.length) return false;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return false;
      if (!sameJson(copy[i], v)) return false;
    }
    return true;
  }
  if (Array.isArray(copy)) return false;
  let n = 0;
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!Object.hasOwn(copy, key) || !sameJson(copy[key], v)) return false;
    n += 1;
  }
  return n === Object.keys(copy).length;
}

/** One decision's view of the file system: within a decide, the kind of a
 * path comes from the same lookup as its real path (one system call, one
 * answer), never from a second look that could disagree. */
let scope = null;

/**
 * Decisions made on `nodeHost`, by (context sent, cwd, command): a decision
 * is a function of its request, the generation's answers (the policy's roots,
 * PATH) and the answers about the paths the command names. So a decision is
 * reused only in the same generation, and only after every named-path
 * question it asked is asked again (afresh, as always) and answered alike.
 * Agents repeat themselves, and the plugin decides a call again after its
 * card is answered.
 */
const DECISIONS_MAX = 256;
const DECISION_TEXT_MAX = 4096;
const decisions = new Map();
let contextsSent = 0;
/** Decides in progress: a host callback that decides again (a host of the
 * caller's own) changes the context the core holds under the outer call. */
let depth = 0;

// Unambiguous whatever the texts hold (NUL included): cwd's length first.
const decisionKey = (cwd, command) => `${contextsSent}:${cwd.length}:${cwd}${command}`;

function replays(log) {
  for (let i = 0; i < log.length; i += 3) {
    const answer = log[i] === 0 ? hostCanonical(log[i + 1]) : hostKind(log[i + 1]);
    if (answer !== log[i + 2]) return false;
  }
  return true;
}

/**
 * Decide one shell call. `host` defaults to the real file system; pass
 * `null` to take paths as spelled (no symlink resolution, nothing exists).
 */
export function decide(request, host = nodeHost) {
  const { command, cwd, ...context } = request ?? {};
  if (typeof command !== 'string' || typeof cwd !== 'string') {
    // The whole request through serde, for its field-naming error.
    return JSON.parse(wasm.decideJson(JSON.stringify(request), host));
  }
  const outer = scope;
  const outerRecording = recording;
  depth += 1;
  try {
    return depth === 1 ? decideOuter(command, cwd, context, host) : decideNested(command, cwd, context, host);
  } finally {
    depth -= 1;
    scope = outer;
    recording = outerRecording;
  }
}

/** A decide from inside another's host callback: the whole context is sent,
 * nothing is reused or kept, and what the core holds afterwards is no longer
 * vouched for (the next outer call sends its context again). */
function decideNested(command, cwd, context, host) {
  sentContext = undefined;
  contextsSent += 1;
  scope = host === nodeHost ? new Map() : null;
  recording = null;
  return JSON.parse(wasm.decideIn(command, cwd, JSON.stringify(context), host));
}

function decideOuter(command, cwd, context, host) {
  // JSON text crosses the wasm boundary several times faster than a JS
  // object converted field by field, and the context (workspace, rules,
  // fence…) only when it changed since the last call.
  const prior = sentContext;
  const same = prior !== undefined && sameContext(prior, context);
  const reuse = host === nodeHost && command.length <= DECISION_TEXT_MAX;
  const g = reuse ? generation() : undefined;
  if (reuse && same) {
    const key = decisionKey(cwd, command);
    const made = decisions.get(key);
    if (made !== undefined && made.generation === g) {
      scope = new Map();
      recording = null;
      if (replays(made.log) && generation() === g) {
        decisions.delete(key); // most recently used last
        decisions.set(key, made);
        return JSON.parse(made.text);
      }
    }
  }
  const json = same ? '' : JSON.stringify(context);
  const frozen = same ? sentFrozen : new Map(Object.entries(context).filter(([, v]) => v !== null && typeof v === 'object' && isDeeplyFrozen(v)));
  sentContext = undefined; // until the core has taken it
  const sentBefore = contextsSent;
  scope = host === nodeHost ? new Map() : null;
  recording = reuse ? [] : null;
  const answer = wasm.decideIn(command, cwd, json, host);
  // A nested decide (from a host callback) replaced the core's context and
  // was counted: leave sentContext unset so the next call sends it again.
  if (contextsSent !== sentBefore) return JSON.parse(answer);
  if (!same) contextsSent += 1;
  sentContext = same ? prior : JSON.parse(json);
  sentFrozen = frozen;
  if (reuse && generation() === g) {
    const key = decisionKey(cwd, command);
    decisions.delete(key);
    decisions.set(key, { generation: g, log: recording, text: answer });
    if (decisions.size > DECISIONS_MAX) decisions.delete(decisions.keys().next().value);
  }
  return JSON.parse(answer);
}
