// Where the daemons a call may be granted listen, as the host process sees
// them: the core's `sockets` field (src/api.rs `Sockets`). A line that only
// asks docker's daemon or the ssh agent something is granted that one socket
// for the call (src/decide/sockets.rs); the runner clears the variables that
// name a socket no grant of the call names.

import { existsSync } from 'node:fs'

/** The default place of docker's socket. */
export const DOCKER_SOCKET = '/var/run/docker.sock'

/**
 * docker's: a `DOCKER_HOST` (the core reads only a unix one), else
 * /var/run/docker.sock when it is there; the ssh agent's: `SSH_AUTH_SOCK`.
 */
export function socketsOf(env, exists = existsSync) {
  const out = {}
  const docker = env.DOCKER_HOST
  if (typeof docker === 'string' && docker !== '') out.docker = docker
  else if (exists(DOCKER_SOCKET)) out.docker = DOCKER_SOCKET
  if (typeof env.SSH_AUTH_SOCK === 'string' && env.SSH_AUTH_SOCK !== '') out.sshAgent = env.SSH_AUTH_SOCK
  return out
}
