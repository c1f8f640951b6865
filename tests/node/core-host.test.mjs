// The node:fs host of 'dsh-allow/core' (pkg/core/index.js, from
// pkg-template/core/index.js): what the core learns about the real disk.
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
  // Not under /tmp: the core's baseline lets anything write there, which
  // would hide whether symlinks were resolved.
  // Not under a temp folder (the baseline opens those fully, hiding what the
  // symlink resolution decides): the target dir, or $HOME/.cache when the
  // checkout itself is in /tmp.
  const underTemp = /^\/(tmp|var\/tmp|dev\/shm)(\/|$)/.test(fs.realpathSync(ROOT));
  const base = underTemp ? path.join(os.homedir(), '.cache', 'dsh-allow-tests') : path.join(ROOT, 'target');
  fs.mkdirSync(base, { recursive: true });
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(base, 'node-test-')));
  fs.mkdirSync(path.join(tmp, 'real', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(tmp, 'real', 'file.txt'), 'x');
  fs.symlinkSync(path.join(tmp, 'real'), path.join(tmp, 'link'));
  fs.symlinkSync(path.join(tmp, 'nowhere'), path.join(tmp, 'dangling'));
  fs.mkdirSync(path.join(tmp, 'bin'));
  fs.writeFileSync(path.join(tmp, 'bin', 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  fs.writeFileSync(path.join(tmp, 'bin', 'plain'), 'not executable', { mode: 0o644 });
  fs.mkdirSync(path.join(tmp, 'bin2'));
  fs.writeFileSync(path.join(tmp, 'bin2', 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  fs.symlinkSync(path.join(tmp, 'bin', 'tool'), path.join(tmp, 'bin2', 'linked'));
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('canonical resolves symlinks of the existing part and keeps the missing tail', () => {
  const { canonical } = core.nodeHost;
  assert.equal(canonical(path.join(tmp, 'link', 'file.txt')), path.join(tmp, 'real', 'file.txt'));
  assert.equal(canonical(path.join(tmp, 'link', 'new', 'deeper.txt')), path.join(tmp, 'real', 'new', 'deeper.txt'));
  assert.equal(canonical(path.join(tmp, 'real', 'sub')), path.join(tmp, 'real', 'sub'));
  // A file in the middle of the path: the part below it cannot exist.
  assert.equal(canonical(path.join(tmp, 'link', 'file.txt', 'x')), path.join(tmp, 'real', 'file.txt', 'x'));
  assert.equal(canonical('/'), '/');
});

test('a dangling link resolves to the path it would create, as the native host answers', () => {
  const { canonical } = core.nodeHost;
  assert.equal(canonical(path.join(tmp, 'dangling')), path.join(tmp, 'nowhere'));
  assert.equal(canonical(path.join(tmp, 'dangling', 'x')), path.join(tmp, 'nowhere', 'x'));
});

test('the named component is always looked up afresh; folders above it until invalidate()', () => {
  const { canonical } = core.nodeHost;
  const swap = path.join(tmp, 'swap');
  fs.mkdirSync(swap);
  assert.equal(canonical(path.join(swap, 'f')), path.join(swap, 'f'));
  // The folder is swapped for a link to elsewhere, as a tool call could.
  fs.rmdirSync(swap);
  fs.symlinkSync(path.join(tmp, 'real'), swap);
  assert.equal(canonical(swap), path.join(tmp, 'real'), 'the named path itself is never taken from a cache');
  core.invalidate();
  assert.equal(canonical(path.join(swap, 'f')), path.join(tmp, 'real', 'f'), 'after invalidate() the folder is resolved again');
});

test('kind follows symlinks; anything unreadable is missing', () => {
  const { kind } = core.nodeHost;
  assert.equal(kind(path.join(tmp, 'real')), 'dir');
  assert.equal(kind(path.join(tmp, 'link')), 'dir');
  assert.equal(kind(path.join(tmp, 'link', 'file.txt')), 'file');
  assert.equal(kind(path.join(tmp, 'dangling')), 'missing');
  assert.equal(kind(path.join(tmp, 'absent')), 'missing');
  assert.equal(kind('/dev/null'), 'file');
});

test('which takes the first executable PATH match, as spelled there', () => {
  const { which } = core.nodeHost;
  const saved = process.env.PATH;
  try {
    process.env.PATH = [path.join(tmp, 'absent'), '', path.join(tmp, 'bin'), path.join(tmp, 'bin2')].join(path.delimiter);
    assert.equal(which('tool'), path.join(tmp, 'bin', 'tool'));
    assert.equal(which('linked'), path.join(tmp, 'bin2', 'linked')); // not realpath'd
    assert.equal(which('plain'), null); // not executable
    assert.equal(which('nope'), null);
    assert.equal(which('bin/tool'), null); // a path is not looked up
  } finally {
    process.env.PATH = saved;
  }
});

test('decide defaults to the node:fs host and accepts null for a lexical one', () => {
  // The workspace is real/; ../link/new.txt is spelled outside it but
  // resolves (through the symlink link -> real) inside it.
  const ws = path.join(tmp, 'real');
  const req = {
    command: 'echo x > ../link/new.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write',
  };
  const viaFs = core.decide(req);
  assert.equal(viaFs.decision, 'allow', JSON.stringify(viaFs));
  const noSymlinks = core.decide(req, { ...core.nodeHost, canonical: (p) => p });
  assert.equal(noSymlinks.decision, 'prompt', JSON.stringify(noSymlinks));
  // null: paths as spelled and nothing on PATH; still a decision, not an error.
  const lexical = core.decide(req, null);
  assert.ok(['allow', 'prompt', 'refuse'].includes(lexical.decision), JSON.stringify(lexical));
});

test('the request context is sent once, yet a rule added in place to the same array is seen at once', () => {
  const ws = path.join(tmp, 'real');
  const rules = [];
  const req = {
    command: 'rm file.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write', rules,
    // Earlier tests point PATH elsewhere: programs not found are the fence's.
    fence: ['read', 'write', 'create', 'delete', 'execute'],
  };
  assert.equal(core.decide(req).decision, 'prompt');
  // The same objects, mutated: a cached context must not hide the new rule.
  rules.push({ id: 'r1', path: ws, recursive: true, access: { delete: true }, hits: 0, createdAt: '2026-12-02T00:00:00Z' });
  const granted = core.decide(req);
  assert.equal(granted.decision, 'allow', JSON.stringify(granted));
  assert.equal(granted.effects.find((e) => e.capability === 'delete').ruleId, 'r1');
  rules[0].access.delete = false;
  assert.equal(core.decide(req).decision, 'prompt');
  rules.pop();
  req.mode = 'read-only';
  assert.equal(core.decide(req).decision, 'refuse');
});

test('rules frozen all the way down are known by identity; a new array, or one only frozen on top, is compared by value', () => {
  const ws = path.join(tmp, 'real');
  const grant = (del) => Object.freeze({ id: 'f1', path: ws, recursive: true, access: Object.freeze({ delete: del }), hits: 0, createdAt: '' });
  const req = {
    command: 'rm file.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write',
    fence: ['read', 'write', 'create', 'delete', 'execute'], rules: Object.freeze([grant(true)]),
  };
  assert.equal(core.decide(req).decision, 'allow');
  assert.equal(core.decide(req).decision, 'allow', 'the same frozen rules again');
  assert.equal(core.decide({ ...req, rules: Object.freeze([grant(false)]) }).decision, 'prompt', 'new frozen rules are new');
  // Frozen on top only: what it holds may change, so it is compared by value.
  const access = { delete: true };
  const shallow = Object.freeze([{ id: 's1', path: ws, recursive: true, access, hits: 0, createdAt: '' }]);
  assert.equal(core.decide({ ...req, rules: shallow }).decision, 'allow');
  access.delete = false;
  assert.equal(core.decide({ ...req, rules: shallow }).decision, 'prompt');
});

test('a bad context is an error naming the field, and the next good call decides afresh', () => {
  const ws = path.join(tmp, 'real');
  const good = {
    command: 'cat file.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write',
    fence: ['read', 'write', 'create', 'delete', 'execute'],
  };
  assert.equal(core.decide(good).decision, 'allow');
  assert.throws(() => core.decide({ ...good, mode: 'yolo' }), /request: .*yolo/);
  assert.throws(() => core.decide({ ...good, command: 7 }), /request: .*command|invalid type/);
  // The bad context was not kept: the read-only one below must be sent.
  assert.equal(core.decide({ ...good, command: 'touch new.txt', mode: 'read-only' }).decision, 'refuse');
  const back = core.decide({ ...good, command: 'touch new.txt' });
  assert.equal(back.decision, 'allow', JSON.stringify(back));
});

test('within one decide, what is at a path comes from the lookup that resolved it', () => {
  const ws = path.join(tmp, 'real');
  const seen = [];
  const spy = Object.freeze({
    canonical: (p) => (seen.push(['canonical', p]), core.nodeHost.canonical(p)),
    kind: (p) => (seen.push(['kind', p]), core.nodeHost.kind(p)),
    which: core.nodeHost.which,
    generation: core.nodeHost.generation,
  });
  // touch asks whether the file exists (write) or not (create).
  const existing = core.decide({
    command: 'touch ../link/file.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write',
  });
  const touch = existing.effects.filter((e) => e.path.endsWith('file.txt'));
  assert.deepEqual(touch.map((e) => e.capability), ['write'], JSON.stringify(existing));
  const fresh = core.decide({
    command: 'touch ../link/brand-new.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write',
  });
  assert.ok(fresh.effects.some((e) => e.path.endsWith('brand-new.txt') && e.capability === 'create'), JSON.stringify(fresh));
  // A spy host is not the node host: no shared lookup, both questions asked.
  core.decide({
    command: 'touch ../link/file.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write',
  }, spy);
  assert.ok(seen.some(([q]) => q === 'kind') && seen.some(([q]) => q === 'canonical'), JSON.stringify(seen));
});

// What the node host reuses across calls is vouched for by the folders it
// was read from. These two need those folders still for a second first
// (a folder changed within the second before it is read is never vouched for).
const settle = () => new Promise((r) => setTimeout(r, 1100));

function quietWorld(name) {
  const root = path.join(tmp, name);
  const ws = path.join(root, 'ws');
  fs.mkdirSync(path.join(ws, 'a'), { recursive: true });
  fs.mkdirSync(path.join(ws, 'b'));
  fs.writeFileSync(path.join(ws, 'a', 'f'), 'x');
  fs.mkdirSync(path.join(root, 'home', '.dsh'), { recursive: true });
  return {
    ws,
    req: (command, rules = []) => ({
      command, cwd: ws, workspace: ws, home: path.join(root, 'home'), harnessHome: path.join(root, 'home', '.dsh'),
      platform: 'linux', mode: 'workspace-write', rules, fence: ['read', 'write', 'create', 'delete', 'execute'],
    }),
  };
}

test('a rule root re-pointed after the policy was prepared is seen at the next decide after invalidate()', async () => {
  const { ws, req } = quietWorld('repoint');
  // The link lives in a folder of its own, which no named path walks
  // through: only the policy's lookup of the rule root reads it.
  const links = path.join(tmp, 'repoint', 'links');
  fs.mkdirSync(links);
  const link = path.join(links, 'link');
  fs.symlinkSync(path.join(ws, 'a'), link);
  // A removal reaches the entry it names, never through a link at its end:
  // the rule names the file through the linked folder.
  const rules = [{ id: 'via-link', path: path.join(link, 'f'), recursive: false, access: { delete: true }, hits: 0, createdAt: '2026-12-02T00:00:00Z' }];
  await settle();
  const before = core.decide(req(`rm ${path.join(ws, 'a', 'f')}`, rules));
  assert.equal(before.decision, 'allow', JSON.stringify(before));
  // The link now points elsewhere: the rule no longer reaches a/.
  fs.unlinkSync(link);
  fs.symlinkSync(path.join(ws, 'b'), link);
  core.invalidate();
  const after = core.decide(req(`rm ${path.join(ws, 'a', 'f')}`, rules));
  assert.equal(after.decision, 'prompt', JSON.stringify(after));
});

test('when nothing changed, a decide after invalidate() reuses the prepared policy and looks up only the named path', async () => {
  const { ws, req } = quietWorld('reuse');
  let lookups = 0;
  const lstat = fs.lstatSync;
  fs.lstatSync = (...a) => ((lookups += 1), lstat.apply(fs, a));
  try {
    // Other test files write under target/ now and then: a folder the policy
    // was read from may change under us, so a few attempts are allowed.
    let seen = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      await settle();
      core.invalidate();
      lookups = 0;
      assert.equal(core.decide(req('cat a/f')).decision, 'allow');
      const first = lookups;
      core.invalidate();
      lookups = 0;
      assert.equal(core.decide(req('cat b/missing')).decision, 'allow');
      seen.push([first, lookups]);
      if (lookups <= 3) break;
    }
    const [first, second] = seen.at(-1);
    assert.ok(second <= 3, `the second decide looked up ${second} paths (attempts: ${JSON.stringify(seen)})`);
    assert.ok(first > second, `the first decide prepared the policy (${first} lookups)`);
    // A change in a folder the policy was read from starts afresh.
    fs.mkdirSync(path.join(ws, 'target'));
    core.invalidate();
    lookups = 0;
    core.decide(req('cat a/f'));
    assert.ok(lookups > 3, `after a change the policy is prepared again (${lookups} lookups)`);
  } finally {
    fs.lstatSync = lstat;
  }
});

test('a path through a process link in /proc is never judged by its text: it runs only under a fence of all five', async () => {
  const { ws, req } = quietWorld('proc-links');
  const home = path.join(tmp, 'proc-links', 'home');
  fs.mkdirSync(path.join(home, '.ssh'));
  fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'secret');
  // A link in the workspace to the shell's own cwd: where it leads is the
  // shell's business, not this Node process's.
  fs.symlinkSync('/proc/self/cwd', path.join(ws, 'here'));
  await settle();
  const unfenced = (command) => ({ ...req(command), cwd: home, fence: [] });
  for (const command of [
    'cat /proc/self/cwd/.ssh/id_rsa',
    `cat /proc/self/root${path.join(home, '.ssh', 'id_rsa')}`,
    `cat /proc/${process.pid}/cwd/.ssh/id_rsa`,
    'cd /proc/self/cwd && cat .ssh/id_rsa',
    `cat ${path.join(ws, 'here', '.ssh', 'id_rsa')}`,
  ]) {
    const d = core.decide(unfenced(command));
    assert.equal(d.decision, 'prompt', `${command}: ${JSON.stringify(d)}`);
    assert.ok(d.unknown.some((u) => /\/proc/.test(u.reason) && !u.bounded), `${command}: ${JSON.stringify(d.unknown)}`);
    assert.ok(!d.effects.some((e) => e.path.startsWith('/proc/')), `${command}: ${JSON.stringify(d.effects)}`);
    // The kernel fence checks the file the link lands on.
    assert.equal(core.decide({ ...unfenced(command), fence: req('').fence }).decision, 'allow', command);
  }
  // Reading what /proc says about a process is not a path through it.
  assert.equal(core.decide(unfenced('cat /proc/self/status /proc/cpuinfo')).decision, 'allow');
});

test('a program made executable earlier on PATH is found after invalidate()', async () => {
  const { req } = quietWorld('path-chmod');
  const xbin = path.join(tmp, 'path-chmod', 'xbin');
  fs.mkdirSync(xbin);
  fs.writeFileSync(path.join(xbin, 'ls'), '#!/bin/sh\n', { mode: 0o644 });
  const saved = process.env.PATH;
  process.env.PATH = `${xbin}:/usr/bin:/bin`;
  try {
    await settle();
    const runs = (d) => d.effects.filter((e) => e.capability === 'execute').map((e) => e.path);
    const before = core.decide(req('ls'));
    assert.ok(!runs(before).includes(path.join(xbin, 'ls')), JSON.stringify(before));
    fs.chmodSync(path.join(xbin, 'ls'), 0o755); // the folder's times do not change
    core.invalidate();
    const after = core.decide(req('ls'));
    assert.ok(runs(after).includes(path.join(xbin, 'ls')), JSON.stringify(after));
  } finally {
    process.env.PATH = saved;
  }
});

test('a decision is made again when a path it names answers differently, and each caller gets its own copy', async () => {
  const { ws, req } = quietWorld('remade');
  await settle();
  const capOf = (d) => d.effects.find((e) => e.path === path.join(ws, 'a', 'new.txt'))?.capability;
  const first = core.decide(req('touch a/new.txt'));
  assert.equal(capOf(first), 'create', JSON.stringify(first));
  first.effects.length = 0; // a caller may change what it was given
  const again = core.decide(req('touch a/new.txt'));
  assert.equal(capOf(again), 'create', JSON.stringify(again));
  // The file appears (no tool call, no invalidate(): its folder a/ is not
  // one the generation watches); the named path is still asked afresh.
  fs.writeFileSync(path.join(ws, 'a', 'new.txt'), '');
  const after = core.decide(req('touch a/new.txt'));
  assert.equal(capOf(after), 'write', JSON.stringify(after));
});

test('a decision is kept by cwd and command however they are spelled (a NUL does not join them)', async () => {
  const { ws, req } = quietWorld('nul-key');
  await settle();
  const first = { ...req(''), cwd: `${ws}\0rm -rf a` };
  const second = { ...req('rm -rf a\0'), cwd: ws };
  core.decide(first);
  const mine = core.decide(second);
  // What a host that keeps nothing says about the second call.
  assert.deepEqual(mine, core.decide(second, { ...core.nodeHost }));
  assert.notDeepEqual(mine, core.decide(first, { ...core.nodeHost }));
});

test('a decide made from inside a host callback neither breaks nor leaks into the call around it', async () => {
  const { ws, req } = quietWorld('nested');
  await settle();
  const rule = { id: 'del-a', path: path.join(ws, 'a'), recursive: true, access: { delete: true }, hits: 0, createdAt: '2026-12-03T00:00:00Z' };
  // The inner call's context holds a rule the outer one does not.
  const inner = req('rm a/f', [rule]);
  const plain = req('rm a/f');
  const expectedInner = core.decide(inner, { ...core.nodeHost });
  const expectedPlain = core.decide(plain, { ...core.nodeHost });
  assert.notDeepEqual(expectedInner, expectedPlain);
  let seen;
  const host = Object.freeze({
    canonical(p) {
      if (seen === undefined) seen = core.decide(inner);
      return p;
    },
    kind: () => 'missing',
    which: (name) => `/custom/bin/${name}`,
    generation: () => 7,
  });
  // The outer context is already sent: the core holds it only between calls.
  assert.deepEqual(core.decide(plain), expectedPlain);
  const outer = core.decide({ ...plain, command: 'cat b/x' }, host);
  assert.deepEqual(seen, expectedInner);
  // PATH answers are the outer host's, not those the inner call looked up.
  const runs = outer.effects.filter((e) => e.capability === 'execute').map((e) => e.path);
  assert.deepEqual(runs, ['/custom/bin/cat'], JSON.stringify(outer));
  // The next plain call answers for its own context, not the inner one's.
  assert.deepEqual(core.decide(plain), expectedPlain);
  assert.deepEqual(core.decide(inner), expectedInner);
});

test('a host that throws makes decide throw, naming the question: nothing is decided on a guess', () => {
  const ws = path.join(tmp, 'real');
  const req = {
    command: 'cat file.txt', cwd: ws, workspace: ws, home: path.join(tmp, 'home'),
    harnessHome: path.join(tmp, 'home', '.dsh'), platform: 'linux', mode: 'workspace-write',
  };
  const broken = { ...core.nodeHost, canonical: () => { throw new Error('disk on fire'); } };
  assert.throws(() => core.decide(req, broken), /host\.canonical.*disk on fire/);
  const wrongType = { ...core.nodeHost, kind: () => 42 };
  assert.throws(() => core.decide({ ...req, command: 'touch new.txt' }, wrongType), /host\.kind/);
  // The node:fs host answers again right after.
  assert.equal(core.decide(req).decision, 'allow');
});

test('a `..` after a symlink climbs from where the link lands, as the kernel opens it', async () => {
  const { ws, req } = quietWorld('dotdot');
  const ssh = path.join(tmp, 'dotdot', 'home', '.ssh');
  fs.mkdirSync(path.join(ssh, 'd'), { recursive: true });
  fs.writeFileSync(path.join(ssh, 'id_rsa'), 'secret');
  fs.symlinkSync(path.join(ssh, 'd'), path.join(ws, 'l'));
  await settle();
  const d = core.decide({ ...req('cat l/../id_rsa'), fence: [] });
  assert.equal(d.decision, 'refuse', JSON.stringify(d));
  assert.ok(d.effects.some((e) => e.path === path.join(ssh, 'id_rsa') && e.capability === 'read'), JSON.stringify(d.effects));
  // Spelled without a link, the same text stays in the workspace.
  fs.unlinkSync(path.join(ws, 'l'));
  fs.mkdirSync(path.join(ws, 'l'));
  core.invalidate();
  assert.equal(core.decide({ ...req('cat l/../a/f'), fence: [] }).decision, 'allow');
});

test('a frozen host that failed once has none of its guesses kept: the next call prepares afresh', async () => {
  const { ws, req } = quietWorld('flaky');
  const links = path.join(tmp, 'flaky', 'links');
  fs.mkdirSync(links);
  const link = path.join(links, 'a');
  fs.symlinkSync(path.join(ws, 'a'), link);
  const rules = [{ id: 'via-link', path: path.join(link, 'f'), recursive: false, access: { delete: true }, hits: 0, createdAt: '2026-12-03T00:00:00Z' }];
  let failures = 1;
  const host = Object.freeze({
    canonical: core.nodeHost.canonical,
    kind: core.nodeHost.kind,
    which: core.nodeHost.which,
    canonicalRoot(p) {
      if (p === link && failures > 0) {
        failures -= 1;
        throw new Error('flaky disk');
      }
      return core.nodeHost.canonicalRoot(p);
    },
    generation: () => 9,
  });
  const command = `rm ${path.join(ws, 'a', 'f')}`;
  assert.throws(() => core.decide(req(command, rules), host), /host\.canonicalRoot.*flaky disk/);
  // Had the policy prepared from the guess (the link as spelled) been kept
  // for generation 9, the rule would not reach a/f.
  const again = core.decide(req(command, rules), host);
  assert.equal(again.decision, 'allow', JSON.stringify(again));
});

test('a system path reached through a cached folder that links out of the system trees is not kept for the minute', async (t) => {
  const shareDir = '/usr/share';
  const name = `dsh-allow-test-${process.pid}`;
  const L = path.join(shareDir, name);
  try {
    fs.symlinkSync(path.join(tmp, 'nowhere-yet'), L);
  } catch (e) {
    t.skip(`cannot make a link in ${shareDir} (${e.code}): needs root`);
    console.log(`SKIP: a link in ${shareDir} needs root (${e.code})`);
    return;
  }
  try {
    const { ws, req } = quietWorld('system-out');
    const home = path.join(tmp, 'system-out', 'home');
    fs.mkdirSync(path.join(ws, 'sub'));
    fs.writeFileSync(path.join(ws, 'sub', 'f'), 'x');
    fs.mkdirSync(path.join(home, '.ssh', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(home, '.ssh', 'sub', 'f'), 'secret');
    fs.unlinkSync(L);
    fs.symlinkSync(ws, L);
    await settle();
    core.invalidate();
    const unfenced = (command) => ({ ...req(command), fence: [] });
    // The folder L is cached by the first call, then walked through by the second.
    assert.equal(core.decide(unfenced(`ls ${L}/sub`)).decision, 'allow');
    assert.equal(core.decide(unfenced(`cat ${L}/sub/f`)).decision, 'allow');
    // L now leads into the credential store.
    fs.unlinkSync(L);
    fs.symlinkSync(path.join(home, '.ssh'), L);
    core.invalidate();
    const after = core.decide(unfenced(`cat ${L}/sub/f`));
    assert.equal(after.decision, 'refuse', JSON.stringify(after));
  } finally {
    fs.rmSync(L, { force: true });
  }
});
