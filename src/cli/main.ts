/** The entry: the one file that touches `process`. */
import { isatty } from 'node:tty';
import { runCli } from './program.js';
import { childEnv } from '../core/child-env.js';
import { configDirOf, earlierConfigDirOf } from '../config/config-home.js';
import { createDeps } from './deps.js';
import { platformEnv } from '../core/platform.js';
import { ExitCode } from '../core/errors.js';

const argv = process.argv.slice(2);

const controller = new AbortController();
const now = new AbortController();
/** Run by the bin shim with start-up flags (a long streaming command): the shim passes signals on. */
const underShim = process.env.OPCLI_LEAN === '1';
/** The first Ctrl-C asks the command to stop cleanly; a second stops at once, after its `stopNow` listeners (a batch's summary). */
function interrupt(): void {
  if (controller.signal.aborted) {
    now.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
    process.exit(130);
  }
  controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
}
const terminate = () => controller.abort(Object.assign(new Error('Terminated'), { name: 'AbortError' }));
/** Set once the terminal went away: nobody reads stdout or stderr any more. */
let hungUp = false;
/** The terminal went away (SIGHUP; on Windows a closed console, and SIGBREAK): stop as for SIGTERM, so a batch writes its state. */
function hangUp(): void {
  hungUp = true;
  terminate();
}
/** Whether standard input was a terminal when opcli started (stdout and stderr keep theirs in `isTTY`). */
const stdinIsTTY = isatty(0);
/**
 * After a hang-up, once the run has written its state and the terminal is gone (isatty turns false),
 * end by SIGHUP itself: a normal exit would have Node restore the gone terminal's settings and abort (nodejs/node#51519).
 */
function endIfTerminalGone(): void {
  const atStart = [stdinIsTTY, !!process.stdout.isTTY, !!process.stderr.isTTY];
  if (process.platform === 'win32' || !atStart.some((was, fd) => was && !isatty(fd))) return;
  process.removeAllListeners('SIGHUP');
  process.kill(process.pid, 'SIGHUP');
}
/** The signals that stop a run, each with what it does. */
const STOPS: [NodeJS.Signals, () => void][] = [
  ['SIGINT', interrupt],
  ['SIGTERM', terminate],
  ['SIGHUP', hangUp],
  ...(process.platform === 'win32' ? [['SIGBREAK', hangUp] as [NodeJS.Signals, () => void]] : []),
];
if (underShim && process.channel) {
  // Under the shim, signals come over the IPC channel, once each; the copy of a terminal's Ctrl-C
  // (or hang-up) that reaches this process directly is ignored, so one press never counts twice.
  for (const [signal] of STOPS) process.on(signal, () => {});
  process.on('message', (message: { opcliSignal?: string }) => {
    STOPS.find(([signal]) => signal === message?.opcliSignal)?.[1]();
  });
  // The channel closes only when the shim dies (kill -9): die the same way at once, so a batch
  // stops filing exactly as it would have without the second process.
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
  process.channel.unref();
} else {
  for (const [signal, stop] of STOPS) process.on(signal, stop);
}
/** Set once the command returned, or when opcli exits on purpose before that. */
let finished = false;
// After a hang-up the terminal's streams fail (EIO) and the run still finishes its state, so the
// failures are ignored; a terminal that answers EIO before any SIGHUP arrived is gone: that is the hang-up.
const terminalGone = (stream: NodeJS.WriteStream, error: NodeJS.ErrnoException) => {
  if (hungUp || !(stream.isTTY && error.code === 'EIO')) return hungUp;
  hangUp();
  return true;
};
process.stderr.on('error', (error: NodeJS.ErrnoException) => {
  if (!terminalGone(process.stderr, error)) throw error;
});
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (terminalGone(process.stdout, error)) return;
  // The reader went away (`opcli orders list | head`): stop quietly.
  if (error.code === 'EPIPE') {
    finished = true;
    process.exit(process.exitCode ?? 0);
  }
  throw error;
});
// Node ends a process whose event loop ran dry even while the command still awaits something that
// can no longer happen (a bug: a promise nobody settles). That must never read as success.
process.on('exit', (code) => {
  if (finished || code) return;
  const message = 'opcli stopped before the command finished: it was left waiting for something that could not happen (a bug in opcli).';
  const hint = 'Run the same command again (a claims batch resumes from its journal: nothing is filed twice) and report this with the output of --verbose.';
  process.stderr.write(
    argv.includes('--json') || argv.includes('--jsonl')
      ? `${JSON.stringify({ error: { message, hint, exitCode: ExitCode.failed } })}\n`
      : `Error: ${message}\nHint: ${hint}\n`,
  );
  process.exitCode = ExitCode.failed;
});

// opcli reads its own copy of the environment; process.env keeps only what a child may see (childEnv),
// so a process a library starts (`open`'s xdg-open) inherits none of opcli's secrets.
const env = { ...process.env };
const forChildren = childEnv(env);
for (const name of Object.keys(process.env)) if (!(name in forChildren)) delete process.env[name];
Object.assign(process.env, forChildren);

// On Windows the config folder may still be where opcli kept it before: moved once, before anything
// reads it (src/config/config-move.ts, loaded only there).
const view = platformEnv(env);
const earlierConfigDir = earlierConfigDirOf(view);
const configDir =
  earlierConfigDir === undefined
    ? undefined
    : (await import('../config/config-move.js')).settleConfigDir(configDirOf(view), earlierConfigDir, (line) => process.stderr.write(`${line}\n`));

// A pipe is written blocking, as a file is: a streaming command waits for a slower reader instead of
// queueing its whole output in memory (libuv queues what a non-blocking pipe cannot take).
(process.stdout as unknown as { _handle?: { setBlocking?: (on: boolean) => void } })._handle?.setBlocking?.(true);

const deps = createDeps({
  stdin: () => process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  stdinIsTTY,
  stdoutIsTTY: !!process.stdout.isTTY,
  stderrIsTTY: !!process.stderr.isTTY,
  env,
  configDir,
  cwd: process.cwd(),
  signal: controller.signal,
  stopNow: now.signal,
});

process.exitCode = await runCli(argv, deps);
finished = true;
if (hungUp) endIfTerminalGone();
