/**
 * CHOICE (docs/spec-choices.md#lock-owners): where the platform does not say when a process started
 * (Windows, macOS), a pid cannot tell a lock's owner from a process that reused it. There the owner
 * answers on an endpoint named by a random token (a named pipe on Windows, else a Unix socket in the
 * temporary folder) until it exits, however it ends: the "liveness token" of lockfile designs
 * (lockfile-create(1)'s pid plus a check only the owner can pass), the system saying when it is gone.
 */
import { unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How long a connection may take before the owner is taken as alive (a busy machine, never a dead owner). */
const ANSWER_MS = 2_000;

/** A token as `answering` makes them: only such a one names an endpoint (a planted record names no other path). */
const TOKEN = /^[0-9a-f]{32}$/;

function endpointOf(token: string): string {
  return process.platform === 'win32' ? `\\\\.\\pipe\\opcli-${token}` : join(tmpdir(), `opcli-${token}.sock`);
}

let mine: Promise<string | undefined> | undefined;

/** This process's token, once it answers on its endpoint (kept until exit); undefined when the platform refuses one. */
export function answering(): Promise<string | undefined> {
  mine ??= new Promise((resolve) => {
    const token = randomBytes(16).toString('hex');
    const server = createServer((socket) => socket.destroy());
    server.once('error', () => resolve(undefined));
    server.listen(endpointOf(token), () => {
      server.unref();
      // A socket file is removed with the server at exit (Node unlinks it on close).
      process.once('exit', () => server.close());
      resolve(token);
    });
  });
  return mine;
}

/**
 * Whether the process with `token` still runs: a connection is answered; a refused or missing
 * endpoint is a process gone (its stale socket file is removed). No answer in time counts as
 * running: a slow machine must never take a live owner's lock.
 */
export function answers(token: string): Promise<boolean> {
  if (!TOKEN.test(token)) return Promise.resolve(false);
  const endpoint = endpointOf(token);
  return new Promise((resolve) => {
    const socket = createConnection(endpoint);
    const done = (alive: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(alive);
    };
    const timer = setTimeout(() => done(true), ANSWER_MS);
    socket.once('connect', () => done(true));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const gone = error.code === 'ENOENT' || error.code === 'ECONNREFUSED';
      if (gone && process.platform !== 'win32') {
        try {
          unlinkSync(endpoint);
        } catch {}
      }
      done(!gone);
    });
  });
}
