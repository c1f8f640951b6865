// Everyday builds under the fence: `cargo build` of a crate with
// dependencies and `npm ci` of a project with a lockfile, each from clean,
// bare and under `dsh-allow run` (the default workspace-write profile, a
// kept fence) — with this build's runner and, when given, another (the one
// before a change) — alternating, the median of each.
// Run after `bash scripts/build.sh` (needs the registries once, to warm
// the caches):
//   node benches/tools.mjs [rounds] [other-runner]
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const runner = path.join(here, '..', 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
const rounds = Number(process.argv[2] ?? 3)
const other = process.argv[3] ? path.resolve(process.argv[3]) : undefined
const home = os.homedir()
// Outside the temp folders (the baseline opens those fully).
const ws = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-tools-'))
const harness = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-harness-'))
// Each runner keeps its fences apart (one runner's kept fence is not the
// other's to read).
const caches = [0, 1].map((i) => path.join(harness, `dsh-allow-fence-${i}`))
caches.forEach((c) => fs.mkdirSync(c))
const profile = JSON.stringify({
  workspace: ws, home, harnessHome: harness, platform: 'linux', mode: 'workspace-write', rules: [], grants: [],
  protectedFiles: [path.join(harness, 'dsh-allow.json'), ...caches],
})
const sh = (cmd, cwd = ws) => {
  const r = spawnSync('/bin/bash', ['-c', cmd], { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`)
}
// A crate with a few dependencies, and an npm project with a lockfile, at
// the workspace's root (where the runner before own entries made `target/`
// and `node_modules/` ahead, so it can be compared).
fs.mkdirSync(path.join(ws, 'src'), { recursive: true })
fs.writeFileSync(path.join(ws, 'Cargo.toml'), '[package]\nname = "bench"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = { version = "1", features = ["derive"] }\nserde_json = "1"\nitoa = "1"\n')
fs.writeFileSync(path.join(ws, 'src', 'main.rs'), 'fn main() { println!("{}", serde_json::json!({"a": itoa::Buffer::new().format(1)})); }\n')
fs.writeFileSync(path.join(ws, 'package.json'), '{"name":"bench","version":"1.0.0","private":true,"dependencies":{"express":"4","lodash":"4","commander":"12"}}\n')
const jobs = {
  'cargo build': { dir: '.', clean: 'rm -rf target/*', cmd: 'cargo build -q --offline' },
  'npm ci': { dir: '.', clean: 'rm -rf node_modules/* node_modules/.[!.]*', cmd: 'npm ci --prefer-offline --no-audit --no-fund --loglevel=error' },
}
const time = (argv, cwd) => {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(argv[0], argv.slice(1), { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  if (r.status !== 0) throw new Error(`${argv.slice(-1)[0]}: exit ${r.status}: ${String(r.stderr).slice(0, 500)}`)
  return Number(process.hrtime.bigint() - t0) / 1e6
}
const runners = { bare: undefined, fenced: runner, ...(other ? { 'fenced (other runner)': other } : {}) }
const results = {}
try {
  // Warm the caches (and make the lockfile) unfenced, once.
  sh('cargo fetch -q')
  sh('npm install --no-audit --no-fund --loglevel=error && mkdir -p target')
  for (const [name, job] of Object.entries(jobs)) {
    const cwd = path.join(ws, job.dir)
    for (let i = 0; i < rounds; i++) {
      for (const [who, bin] of Object.entries(runners)) {
        sh(job.clean, cwd)
        const cache = caches[bin === runner ? 0 : 1]
        const argv = bin ? [bin, 'run', '--profile-json', profile, '--fence-cache', cache, '--', '/bin/bash', '-c', job.cmd] : ['/bin/bash', '-c', job.cmd]
        ;((results[name] ??= {})[who] ??= []).push(time(argv, cwd))
      }
    }
  }
} finally {
  fs.rmSync(ws, { recursive: true, force: true })
  fs.rmSync(harness, { recursive: true, force: true })
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(`everyday builds from clean, ${rounds} rounds, ${runner}${other ? ` and ${other}` : ''}`)
for (const [name, byWho] of Object.entries(results)) {
  const bare = median(byWho.bare)
  const parts = Object.entries(byWho).map(([who, xs]) => `${who} ${(median(xs) / 1000).toFixed(2)} s${who === 'bare' ? '' : ` (${(median(xs) / bare).toFixed(2)}x)`}`)
  console.log(`${name.padEnd(12)} ${parts.join('  ')}`)
}
