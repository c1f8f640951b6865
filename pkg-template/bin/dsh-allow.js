#!/usr/bin/env node
// `npx dsh-allow …` / node_modules/.bin/dsh-allow: runs the native CLI built
// for this platform (bin/<platform>-<arch>/dsh-allow), passing everything on.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const platform = `${process.platform}-${process.arch}`; // linux-x64, darwin-arm64, …
const exe = fileURLToPath(new URL(`./${platform}/dsh-allow`, import.meta.url));
if (!existsSync(exe)) {
  console.error(`dsh-allow: this package ships no native CLI for ${platform}; the core ('dsh-allow/core') works everywhere`);
  process.exit(1);
}
const run = spawnSync(exe, process.argv.slice(2), { stdio: 'inherit' });
if (run.error) {
  console.error(`dsh-allow: ${run.error.message}`);
  process.exit(1);
}
process.exit(run.status ?? 1);
