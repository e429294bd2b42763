/** The entry: the one file that touches `process`. */
import { isatty } from 'node:tty';
import { runCli } from './cli.js';
import { createDeps } from './deps.js';

const argv = process.argv.slice(2);

const controller = new AbortController();
let firstInterrupt = 0;
process.on('SIGINT', () => {
  // The first Ctrl-C asks the running command to stop cleanly; a second one stops at once. conf's
  // atomic writer (through when-exit) re-raises every signal it sees, so a repeat within 300 ms
  // is that echo, not the user pressing again.
  if (controller.signal.aborted) {
    if (Date.now() - firstInterrupt > 300) process.exit(130);
    return;
  }
  firstInterrupt = Date.now();
  controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
});
process.on('SIGTERM', () => controller.abort(Object.assign(new Error('Terminated'), { name: 'AbortError' })));
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // The reader went away (`opcli orders list | head`): stop quietly.
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const deps = createDeps({
  stdin: () => process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  stdinIsTTY: isatty(0),
  stdoutIsTTY: !!process.stdout.isTTY,
  stderrIsTTY: !!process.stderr.isTTY,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});

process.exitCode = await runCli(argv, deps);
