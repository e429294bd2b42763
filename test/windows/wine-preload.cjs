/*
 * Preloaded (`node.exe --require`) into every Windows Node run of the Windows smoke test
 * (test/windows/smoke.mjs), and only there: it works around a bug of Wine, not of opcli, so it
 * never goes into src/ (CONTRIBUTING.md, "The Windows smoke test").
 *
 * Under Wine 8, libuv's keep-alive call on a TCP socket that is still connecting (what
 * `socket.setKeepAlive()` does between `net.connect()` and the 'connect' event, as undici's
 * connector does on every new connection) makes the connection fail with
 * `connect UNKNOWN 127.0.0.1:PORT`: every HTTP request of opcli fails, and `opcli demo` waits for a
 * login that never comes. On Windows itself the same calls work. So a socket that is connecting gets
 * its keep-alive once it has connected; one that is connected (or not yet connecting) gets it at
 * once, as before.
 *
 * The shim passes its Node flags (this --require included) to the child it starts for a long batch
 * (bin/opcli.cjs, duty 2), so the child is covered too.
 */
'use strict';
const net = require('node:net');

const setKeepAlive = net.Socket.prototype.setKeepAlive;
net.Socket.prototype.setKeepAlive = function setKeepAliveOnceConnected(enable, initialDelay) {
  if (this.connecting) {
    this.once('connect', () => setKeepAlive.call(this, enable, initialDelay));
    return this;
  }
  return setKeepAlive.call(this, enable, initialDelay);
};
