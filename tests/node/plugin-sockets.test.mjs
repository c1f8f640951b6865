// The daemons' sockets the plugin tells the core about (plugin/sockets.js).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DOCKER_SOCKET, socketsOf } from '../../plugin/sockets.js'

test('docker\'s socket comes from DOCKER_HOST, else the default one when it is there', () => {
  assert.deepEqual(socketsOf({ DOCKER_HOST: 'unix:///run/user/1000/docker.sock' }, () => false), { docker: 'unix:///run/user/1000/docker.sock' })
  assert.deepEqual(socketsOf({}, (p) => p === DOCKER_SOCKET), { docker: DOCKER_SOCKET })
  assert.deepEqual(socketsOf({}, () => false), {}, 'no daemon known: no socket')
  assert.deepEqual(socketsOf({ DOCKER_HOST: '' }, () => false), {})
})

test('the ssh agent\'s socket is SSH_AUTH_SOCK, when set', () => {
  assert.deepEqual(socketsOf({ SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1' }, () => false), { sshAgent: '/tmp/ssh-x/agent.1' })
  assert.deepEqual(socketsOf({ SSH_AUTH_SOCK: '' }, () => false), {})
})
