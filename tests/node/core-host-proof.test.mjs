// How the node host proves, after a tool call, that what it reuses still
// holds (pkg-template/core/index.js: steps and folder times). Each
// test names the case the proof must not get wrong; the counts of system
// calls show which way it was proven, never how long it took.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
let core, tmp;

before(async () => {
  const entry = path.join(ROOT, 'pkg', 'core', 'index.js');
  assert.ok(fs.existsSync(entry), 'pkg/ is missing: run `make build` first');
  core = await import(pathToFileURL(entry).href);
  // Not under a temp folder (the baseline opens those fully), nor under the
  // checkout's target/ or ~/.cache, where builds write all the time: a
  // folder on the way that keeps changing is never vouched for by its
  // times, and these tests need one that is.
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

test('a folder made where a named path found nothing keeps the prepared policy, and the next walk goes through it', async () => {
  const { ws, root, req } = world('named-tier');
  await settle();
  core.invalidate();
  // Preparing the policy looks up its roots; `build` is looked up (missing)
  // only on the way to the named path.
  const prepared = counting(() => core.decide(req('mkdir -p build/x'))).lstat;
  fs.mkdirSync(path.join(ws, 'build', 'x'), { recursive: true });
  core.invalidate();
  const after = counting(() => core.decide(req('touch build/x/a')));
  assert.equal(after.result.decision, 'allow');
  assert.ok(after.lstat * 3 < prepared, `looked up ${after.lstat} paths again (preparing took ${prepared})`);
  // What the named tier found is looked up again: build/ swapped for a link
  // out of the workspace is followed.
  const elsewhere = path.join(root, 'elsewhere');
  fs.mkdirSync(path.join(elsewhere, 'x'), { recursive: true });
  fs.rmSync(path.join(ws, 'build'), { recursive: true });
  fs.symlinkSync(elsewhere, path.join(ws, 'build'));
  core.invalidate();
  const d = core.decide(req('touch build/x/a', { fence: [] }));
  assert.equal(d.decision, 'prompt', `a write outside the workspace: ${JSON.stringify(d.effects)}`);
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

test('after a tool call that changed nothing, each folder is vouched for by one stat and nothing is looked up again', async () => {
  const { req } = world('quiet');
  await settle();
  core.invalidate();
  const first = counting(() => core.decide(req('cat a/f')));
  assert.ok(first.lstat > 3, `preparing the policy looked up only ${first.lstat} paths`);
  await settle();
  core.invalidate();
  const quiet = counting(() => core.decide(req('cat a/f')));
  // The named path is always looked up afresh; nothing else is.
  assert.equal(quiet.lstat, 1, `looked up ${quiet.lstat} paths after a quiet call`);
  assert.ok(quiet.stat >= 3, `only ${quiet.stat} folders were looked at after the call`);
});

test('a folder moved away and made again at its path is not taken for the old one', async () => {
  const { ws, root, req } = world('moved');
  const elsewhere = path.join(root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  fs.mkdirSync(path.join(ws, 'a', 'sub'));
  fs.writeFileSync(path.join(ws, 'a', 'sub', 'f'), 'x');
  const read = req('cat a/sub/f', { fence: [] });
  await settle();
  core.invalidate();
  assert.equal(core.decide(read).decision, 'allow');
  // A tool call moves a/ away and makes a new a/sub in its place.
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

test('a PATH program made executable after its folder was vouched for is found at once', async () => {
  const { root, req } = world('chmod');
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
    await settle();
    core.invalidate();
    assert.ok(!runs(core.decide(req('ls'))).includes(path.join(xbin, 'ls')));
    // The folder's times do not change, only the file's mode.
    fs.chmodSync(path.join(xbin, 'ls'), 0o755);
    core.invalidate();
    const after = core.decide(req('ls'));
    assert.ok(runs(after).includes(path.join(xbin, 'ls')), JSON.stringify(after.effects));
  } finally {
    process.env.PATH = saved;
  }
});

test('a folder named like a PATH mode step (a leading !) that becomes a link out of the workspace is followed', async () => {
  const { ws, root, req } = world('bang');
  const home = path.join(root, 'home');
  fs.writeFileSync(path.join(home, '.bashrc'), '# rc\n');
  await settle();
  core.invalidate();
  core.decide(req("cat '!d/x'", { fence: [] }));
  fs.symlinkSync(home, path.join(ws, '!d'));
  core.invalidate();
  await settle();
  const d = core.decide(req("echo x >> '!d/.bashrc'", { fence: [] }));
  assert.notEqual(d.decision, 'allow', `a write to the home's .bashrc through !d: ${JSON.stringify(d.effects)}`);
});

test('a program found on PATH is resolved as the policy\'s roots are: a link swapped before the next decide is not kept for the generation', async () => {
  const { root, req } = world('program-link');
  for (const v of ['v1', 'v2']) {
    fs.mkdirSync(path.join(root, v, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(root, v, 'bin', 'prog'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(root, v, 'bin', 'readme'), 'x');
  }
  fs.symlinkSync(path.join(root, 'v1'), path.join(root, 'tools'));
  const savedPath = process.env.PATH;
  process.env.PATH = `/usr/bin:/bin:${root}/tools/bin`;
  try {
    const rules = [{ id: 'no-v2', path: path.join(root, 'v2'), recursive: true, access: { execute: false } }];
    await settle();
    core.invalidate();
    // A named path walks tools/ (to v1); then, with no tool call between,
    // tools/ is made to lead to v2 and the program is looked up on PATH.
    core.decide(req(`cat ${root}/tools/bin/readme`, { rules, fence: [] }));
    fs.rmSync(path.join(root, 'tools'));
    fs.symlinkSync(path.join(root, 'v2'), path.join(root, 'tools'));
    core.decide(req('prog', { rules, fence: [] }));
    fs.rmSync(path.join(root, 'v1'), { recursive: true });
    for (let i = 0; i < 2; i += 1) {
      core.invalidate();
      await settle();
      const d = core.decide(req(`prog ${i}`, { rules, fence: [] }));
      assert.notEqual(d.decision, 'allow', `prog runs from v2, where execute is denied: ${JSON.stringify(d.effects)}`);
    }
  } finally {
    process.env.PATH = savedPath;
  }
});
