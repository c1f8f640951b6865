// What the DSH host took from a `.env` file when it started.
//
// DSH loads the `.env` of the folder it was started in (and of its home)
// into its own environment before any plugin runs (dsh-app-boot
// `loadLayeredEnv`), so every call inherits those values. Its blocklist
// lets through variables that name code or move a repository
// (`GIT_CONFIG_PARAMETERS` with a planted `core.fsmonitor` runs at the next
// `git status`, `OPENSSL_CONF`, `GCONV_PATH`, `PERLLIB`…). The launch
// environment snapshot says which layer supplied each value; those the
// workspace's `.env` supplied and the core's table names are removed from
// every fenced call (`env -u`, in front of the command). What the user's own
// environment carries stays: that is where EDITOR, CC or LD_LIBRARY_PATH
// come from on purpose.

/** The layer of DSH's launch environment that is the started-in folder's `.env`. */
export const PROJECT_ENV = 'project-env'

/**
 * The names whose value in `env` came from the started-in folder's `.env`
 * (`launch`: DSH's launch environment snapshot, `ctx.get('launchEnvironment')`).
 */
export function fromProjectEnv(launch, env = process.env) {
  if (typeof launch?.get !== 'function') return []
  return Object.keys(env).filter((name) => launch.get(name)?.source === PROJECT_ENV).sort()
}

/** `argv` with `names` removed from its environment first (`/usr/bin/env -u`). */
export function withoutVariables(argv, names) {
  if (names.length === 0) return argv
  return ['/usr/bin/env', ...names.flatMap((name) => ['-u', name]), ...argv]
}
