/**
 * CHOICE (docs/spec-choices.md#lock-owners): where the platform does not say when a process started (Windows, macOS: process-start.ts knows
 * Linux's /proc only), a pid alone cannot tell a lock's owner from a process that reused its pid,
 * which Windows does within seconds. There the owner answers on an endpoint named by a random token
 * of its process, a Windows named pipe (`\\.\pipe\opcli-<token>`) or elsewhere a Unix socket in
 * the temporary folder, from its first lock until it exits; the system closes it when the process
 * ends, however it ends. A process that merely has the pid has no such endpoint. This is the
 * "liveness token" of lockfile designs (lockfile-create(1)'s pid plus a check the owner alone can
 * pass), with the operating system, not a clock, saying when the owner is gone.
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

/** The endpoint of the process whose token is `token`. */
function endpointOf(token: string): string {
  return process.platform === 'win32' ? `\\\\.\\pipe\\opcli-${token}` : join(tmpdir(), `opcli-${token}.sock`);
}

let mine: Promise<string | undefined> | undefined;

/**
 * This process's token, once it answers on the token's endpoint (made on first use, kept until the
 * process exits, never keeping it alive); undefined when the platform refuses an endpoint (a lock
 * is then judged by its pid alone).
 */
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
