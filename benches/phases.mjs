// Where one fenced call's time goes, phase by phase: `dsh-allow run` as the
// plugin starts it (the profile by file, kept fences and the keeper, in a git
// repository) running `bash -c true`, traced by `perf trace` on the few
// system calls that mark the phases (the others run untraced):
//   before the fork   reading the profile and the kept fence, asking the keeper
//   fork to namespace the child until its mount namespace is made or joined
//   mounts            the read-only tree, surfaces, /dev/pts (or the joined copy)
//   init and /proc    the call's process namespace: its init, its /proc
//   Landlock          the ruleset built (or the held one completed) and applied
//   hand, seccomp     the helper, the command's process, the seccomp filter
//   to the exec       capabilities, descriptors, the command's execve
//   the command       bash itself
//   exit to the end   the command's exit until the runner's
// Run after `bash scripts/build.sh`, as root (perf):
//   node benches/phases.mjs [calls] [runner]
// Medians over the calls; perf's tracing adds ~10 µs to each traced call.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const calls = Number(process.argv[2] ?? 40)
const runner = process.argv[3] ? path.resolve(process.argv[3]) : path.join(here, '..', 'pkg', 'bin', `${process.platform}-${process.arch}`, 'dsh-allow')
const probe = spawnSync('perf', ['trace', '-e', 'exit_group', '--', 'true'], { encoding: 'utf8' })
if (probe.status !== 0) {
  console.error(`phases bench: perf trace cannot run here (${(probe.stderr || probe.error?.message || '').trim().split('\n')[0]})`)
  process.exit(1)
}

const home = os.homedir()
const root = fs.mkdtempSync(path.join(home, '.dsh-allow-bench-phases-'))
const repo = path.join(root, 'repo')
const harness = path.join(root, 'harness')
const cache = path.join(harness, 'dsh-allow-fence')
for (const d of [repo, cache]) fs.mkdirSync(d, { recursive: true })
spawnSync('git', ['init', '-q', repo])
const profile = path.join(harness, 'profile.json')
fs.writeFileSync(profile, JSON.stringify({
  workspace: repo, home, harnessHome: harness, platform: 'linux', mode: 'workspace-write', rules: [], grants: [],
  protectedFiles: [path.join(harness, 'dsh-allow.json'), cache, profile], enforce: 'full', persistence: 'shut',
}))
const argv = [runner, 'run', '--profile-file', profile, '--fence-cache', cache, '--', '/bin/bash', '-c', 'true']
const MARKS = 'execve,clone,clone3,fork,unshare,setns,mount,mount_setattr,open_tree,landlock_create_ruleset,landlock_restrict_self,seccomp,exit_group'

const PHASES = ['before the fork', 'fork to namespace', 'mounts', 'init and /proc', 'Landlock', 'hand, seccomp', 'to the exec', 'the command', 'exit to the end', 'whole call']
const rows = []
try {
  // Kept, and held by the keeper, before the traced calls.
  spawnSync(argv[0], argv.slice(1), { cwd: repo })
  spawnSync('sleep', ['1.1'])
  for (let i = 0; i < 3; i += 1) spawnSync(argv[0], argv.slice(1), { cwd: repo })
  const held = spawnSync(argv[0], [...argv.slice(1, -4), '--report-fence', ...argv.slice(-4)], { cwd: repo, encoding: 'utf8' }).stderr
  console.log(`phases of ${calls} calls, ${runner}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${held.split('\n').find((l) => l.startsWith('dsh-allow held: ')) ?? '(no keeper in this runner)'}`)
  for (let i = 0; i < calls; i += 1) {
    const out = spawnSync('perf', ['trace', '-f', '-e', MARKS, '--', ...argv], { cwd: repo, encoding: 'utf8' }).stderr
    const ev = []
    for (const line of out.split('\n')) {
      const m = /^\s*([\d.]+) \(\s*([\d.]*)\s*(?:ms)?\):\s+(\S+)\/(\d+)\s+(?:\.\.\. \[continued\]: )?(\w+)\(/.exec(line)
      if (m) ev.push({ t: Number(m[1]), end: Number(m[1]) + Number(m[2] || 0), comm: m[3], pid: Number(m[4]), call: m[5], line })
    }
    const first = (f) => ev.find(f)
    const last = (f) => [...ev].reverse().find(f)
    // The runner is the traced command: the first process seen.
    const runnerPid = ev[0]?.pid
    const fork = first((e) => e.pid === runnerPid && (e.call === 'clone' || e.call === 'fork'))
    const ns = last((e) => e.call === 'setns' || (e.call === 'unshare' && !/536870912/.test(e.line)))
    const devpts = last((e) => e.call === 'mount' && /BIND/.test(e.line)) ?? last((e) => e.call === 'mount' && e.pid === ns?.pid)
    const restrict = first((e) => e.call === 'landlock_restrict_self')
    const proc = last((e) => e.call === 'mount' && e.t < (restrict?.t ?? 0))
    const seccomp = first((e) => e.call === 'seccomp')
    const exec = first((e) => e.call === 'execve' && e.comm === 'bash')
    const bashExit = first((e) => e.call === 'exit_group' && e.comm === 'bash')
    const end = last((e) => e.call === 'exit_group' && e.pid === runnerPid)
    if (![fork, ns, devpts, restrict, proc, seccomp, exec, bashExit, end].every(Boolean)) continue
    rows.push([fork.t, ns.end - fork.t, devpts.end - ns.end, proc.end - devpts.end, restrict.end - proc.end, seccomp.end - restrict.end, exec.end - seccomp.end, bashExit.t - exec.end, end.t - bashExit.t, end.t])
  }
} finally {
  fs.rmSync(root, { recursive: true, force: true })
}
if (rows.length === 0) {
  console.error('phases bench: no call could be split (a marker was missing from every trace)')
  process.exit(1)
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(`| ${PHASES.join(' | ')} |`)
console.log(`|${'---|'.repeat(PHASES.length)}`)
console.log(`| ${PHASES.map((_, k) => median(rows.map((r) => r[k])).toFixed(2)).join(' | ')} |  (ms, medians of ${rows.length} calls)`)
