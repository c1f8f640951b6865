// How the node host proves, after a tool call, that what it reuses still
// holds (pkg-template/core/index.js: steps, folder times, the watcher). Each
// test names the case the proof must not get wrong; the counts of system
// calls show which way it was proven, never how long it took.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const linux = process.platform === 'linux';
let core, tmp;

before(async () => {
  const entry = path.join(ROOT, 'pkg', 'core', 'index.js');
  assert.ok(fs.existsSync(entry), 'pkg/ is missing: run `make build` first');
  core = await import(pathToFileURL(entry).href);
  // Not under a temp folder (the baseline opens those fully), nor under the
  // checkout's target/ or ~/.cache, where builds write all the time: a
  // folder on the way that keeps changing is never vouched for by the
  // watcher, and these tests need one that is.
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.homedir(), '.dsh-allow-proof-')));
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Folders changed within the second before they are read are not vouched
// for by their times: the worlds below are left still for a second first.
const settle = () => sleep(1100);

function world(name) {
  const root = path.join(tmp, name);
  const ws = path.join(root, 'ws');
  fs.mkdirSync(path.join(ws, 'a'), { recursive: true });
  fs.mkdirSync(path.join(ws, 'b'));
  fs.writeFileSync(path.join(ws, 'a', 'f'), 'x');
  fs.mkdirSync(path.join(root, 'home', '.dsh'), { recursive: true });
  return {
    root,
    ws,
    req: (command, extra = {}) => ({
      command, cwd: ws, workspace: ws, home: path.join(root, 'home'), harnessHome: path.join(root, 'home', '.dsh'),
      platform: 'linux', mode: 'workspace-write', rules: [], fence: ['read', 'write', 'create', 'delete', 'execute'], ...extra,
    }),
  };
}

/** Run `f` counting the system calls the host makes through node:fs. */
function counting(f) {
  const counts = { stat: 0, lstat: 0 };
  const { statSync, lstatSync } = fs;
  fs.statSync = (...a) => ((counts.stat += 1), statSync.apply(fs, a));
  fs.lstatSync = (...a) => ((counts.lstat += 1), lstatSync.apply(fs, a));
  try {
    return { result: f(), ...counts };
  } finally {
    fs.statSync = statSync;
    fs.lstatSync = lstatSync;
  }
}

/** A tool call that changed nothing, then a decide once the watcher had a
 * moment: the stats it made (0 once the watcher vouches for every folder). */
async function quietCall(req) {
  core.invalidate();
  await sleep(20);
  return counting(() => core.decide(req)).stat;
}

/** Calls that change nothing until one is proven by the watcher alone (no
 * stat at all), or undefined if none was within the attempts. */
async function untilWatched(req) {
  for (let attempt = 0; attempt < 40; attempt++) {
    if ((await quietCall(req)) === 0) return attempt;
  }
  return undefined;
}

test('a change in a folder the policy was read from that changes none of its answers keeps the prepared policy', async () => {
  const { ws, req } = world('unrelated');
  await settle();
  core.invalidate();
  const prepared = counting(() => core.decide(req('cat a/f'))).lstat;
  // A new file beside the policy's roots (target/, .git, node_modules… are
  // looked up in the workspace): the folder changed, its answers did not.
  fs.writeFileSync(path.join(ws, 'notes.md'), 'x');
  core.invalidate();
  const after = counting(() => core.decide(req('cat a/f')));
  assert.equal(after.result.decision, 'allow');
  assert.ok(after.lstat * 3 < prepared, `looked up ${after.lstat} paths again (preparing took ${prepared})`);
  // A root of the policy that appears does change an answer: prepared again.
  fs.mkdirSync(path.join(ws, 'target'));
  core.invalidate();
  const changed = counting(() => core.decide(req('cat a/f')));
  assert.ok(changed.lstat * 3 >= prepared, `after target/ appeared only ${changed.lstat} lookups (preparing took ${prepared})`);
});

test('a folder on the way swapped for a link is followed at the next decide, its folder\'s mtime put back', async () => {
  const { ws, root, req } = world('swap-times');
  const elsewhere = path.join(root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  await settle();
  core.invalidate();
  // No fence: the decision alone stands between the command and the file.
  assert.equal(core.decide(req('cat a/f', { fence: [] })).decision, 'allow');
  // The folder a/ becomes a link out of the workspace, and the workspace
  // gets its old mtime back (its ctime cannot be).
  const { mtime, atime } = fs.statSync(ws);
  fs.rmSync(path.join(ws, 'a'), { recursive: true });
  fs.symlinkSync(elsewhere, path.join(ws, 'a'));
  fs.utimesSync(ws, atime, mtime);
  core.invalidate();
  const d = core.decide(req('cat a/f', { fence: [] }));
  assert.equal(d.decision, 'prompt', `a read outside the workspace: ${JSON.stringify(d.effects)}`);
});

test('after a tool call that changed nothing, the watcher vouches for every folder without a system call', { skip: !linux && 'the watcher runs on Linux only' }, async () => {
  const { req } = world('quiet');
  await settle();
  core.invalidate();
  core.decide(req('cat a/f'));
  const attempt = await untilWatched(req('cat a/f'));
  assert.notEqual(attempt, undefined, 'no decide after a tool call was proven by the watcher alone');
});

test('a folder the watcher vouched for, swapped for a link by the next tool call, is followed at once', { skip: !linux && 'the watcher runs on Linux only' }, async () => {
  const { ws, root, req } = world('swap-watched');
  const elsewhere = path.join(root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  await settle();
  core.invalidate();
  const read = req('cat a/f', { fence: [] });
  assert.equal(core.decide(read).decision, 'allow');
  assert.notEqual(await untilWatched(read), undefined);
  // What the tool call does; the decide comes right after, no pause.
  fs.rmSync(path.join(ws, 'a'), { recursive: true });
  fs.symlinkSync(elsewhere, path.join(ws, 'a'));
  core.invalidate();
  const d = core.decide(read);
  assert.equal(d.decision, 'prompt', `a read outside the workspace: ${JSON.stringify(d.effects)}`);
});

test('a folder the watcher vouched for, moved away and made again at its path, is not vouched for by the old watch', { skip: !linux && 'the watcher runs on Linux only' }, async () => {
  const { ws, root, req } = world('moved-watched');
  const elsewhere = path.join(root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  fs.mkdirSync(path.join(ws, 'a', 'sub'));
  fs.writeFileSync(path.join(ws, 'a', 'sub', 'f'), 'x');
  const read = req('cat a/sub/f', { fence: [] });
  await settle();
  core.invalidate();
  assert.equal(core.decide(read).decision, 'allow');
  assert.notEqual(await untilWatched(read), undefined);
  // A tool call moves a/ away and makes a new a/sub in its place: the old
  // watch follows the folder that moved, not what is at a/ now.
  fs.renameSync(path.join(ws, 'a'), path.join(ws, 'a-old'));
  fs.mkdirSync(path.join(ws, 'a', 'sub'), { recursive: true });
  core.invalidate();
  assert.equal(core.decide(read).decision, 'allow');
  // The next one swaps the new a/sub for a link out of the workspace.
  fs.rmSync(path.join(ws, 'a', 'sub'), { recursive: true });
  fs.symlinkSync(elsewhere, path.join(ws, 'a', 'sub'));
  core.invalidate();
  const d = core.decide(read);
  assert.equal(d.decision, 'prompt', `a read outside the workspace: ${JSON.stringify(d.effects)}`);
});

test('a PATH program made executable after the watcher vouched for its folder is found at once', { skip: !linux && 'the watcher runs on Linux only' }, async () => {
  const { root, req } = world('chmod-watched');
  const xbin = path.join(root, 'xbin');
  fs.mkdirSync(xbin);
  fs.writeFileSync(path.join(xbin, 'ls'), '#!/bin/sh\n', { mode: 0o644 });
  const saved = process.env.PATH;
  process.env.PATH = `${xbin}:/usr/bin:/bin`;
  try {
    await settle();
    const runs = (d) => d.effects.filter((e) => e.capability === 'execute').map((e) => e.path);
    core.invalidate();
    assert.ok(!runs(core.decide(req('ls'))).includes(path.join(xbin, 'ls')));
    assert.notEqual(await untilWatched(req('ls')), undefined);
    // The folder's times do not change; only the watcher's event shows it.
    fs.chmodSync(path.join(xbin, 'ls'), 0o755);
    core.invalidate();
    const after = core.decide(req('ls'));
    assert.ok(runs(after).includes(path.join(xbin, 'ls')), JSON.stringify(after.effects));
  } finally {
    process.env.PATH = saved;
  }
});

test('after more events than half the kernel queue holds, the watcher vouches for nothing until every folder was looked at', { skip: !linux && 'the watcher runs on Linux only' }, async () => {
  const { ws, req } = world('flood');
  await settle();
  core.invalidate();
  core.decide(req('cat a/f b/x'));
  assert.notEqual(await untilWatched(req('cat a/f b/x')), undefined);
  // Had the queue overflowed, events of other folders could be lost: none
  // of them may be vouched for by the watcher now.
  const max = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
  // In the workspace, where the policy's roots are looked up: a folder the
  // watcher counts.
  for (let i = 0; i < Math.ceil(max / 4) + 16; i++) {
    const f = path.join(ws, `noise-${i}`);
    fs.writeFileSync(f, '');
    fs.unlinkSync(f);
  }
  await sleep(200);
  // One quiet call proven by the watcher, for comparison, is not possible
  // now: every folder is looked at (one stat each), as after a restart.
  const flooded = await quietCall(req('cat a/f b/x'));
  assert.ok(flooded >= 3, `only ${flooded} folders were looked at after the flood`);
  // Once they have been, the watcher vouches again.
  assert.notEqual(await untilWatched(req('cat a/f b/x')), undefined);
});
