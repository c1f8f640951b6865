// The node host's folder watcher, on a thread of its own (see `Watcher` in
// index.js): it watches the folders the host's reused answers were read
// from and counts, in memory shared with the host, every event the kernel
// reports in each. It owns its event loop, so it reads the kernel's queue
// while the host's thread is busy deciding, and its inotify instance holds
// only these watches, so the total it counts bounds what the kernel's queue
// can have dropped.
//
// Shared layout (Int32Array): see the constants below, mirrored in index.js.

import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

const ACKED = 0; // the highest sentinel number whose rename was seen
const EVENTS = 1; // every event received, in every watched folder
const READY = 2; // 1: the sentinel is watched; -1: it could not be
const TOKENS = 8; // 8 entries: the random part of sentinel n at TOKENS + n % 8
const SLOTS = 16; // per folder: state, then count
const WATCHING = 1;
const FAILED = 2;

const shared = new Int32Array(workerData.buffer);

/** Watch `dir`; `onBroken` when the watch fails later (the folder went). */
function start(dir, onEvent, onBroken) {
  fs.watch(dir, { persistent: true }, onEvent).on('error', onBroken);
}

try {
  start(workerData.sentinelDir, (type, name) => {
    Atomics.add(shared, EVENTS, 1);
    // The host renames the sentinel to `<n>-<random>`, the random part
    // written here just before: only its own rename acknowledges n, and
    // every event queued before that rename has been counted by then.
    const m = /^(\d+)-(-?\d+)$/.exec(name ?? '');
    if (m === null) return;
    const n = Number(m[1]);
    if (n > Atomics.load(shared, ACKED) && Atomics.load(shared, TOKENS + (n % 8)) === Number(m[2])) {
      Atomics.store(shared, ACKED, n);
      Atomics.notify(shared, ACKED);
    }
  }, () => Atomics.store(shared, READY, -1));
  Atomics.store(shared, READY, 1);
} catch {
  Atomics.store(shared, READY, -1);
}
Atomics.notify(shared, READY);

parentPort.on('message', ({ slot, dir }) => {
  const state = SLOTS + 2 * slot;
  const count = state + 1;
  const name = path.basename(dir);
  try {
    start(dir, (type, entry) => {
      Atomics.add(shared, EVENTS, 1);
      Atomics.add(shared, count, 1);
      // The folder itself moved or went (a 'rename' under its own name;
      // its own attributes changing is a 'change'): this watch no longer
      // follows what is at its path.
      if (type === 'rename' && entry === name) Atomics.store(shared, state, FAILED);
    }, () => Atomics.store(shared, state, FAILED));
    // Set once the kernel watch exists: every later change is counted.
    Atomics.store(shared, state, WATCHING);
  } catch {
    Atomics.store(shared, state, FAILED);
  }
});
