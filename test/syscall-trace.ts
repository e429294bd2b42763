/**
 * The built binary run under strace (Linux), and the trace read back as calls in the order they
 * happened: what reached the disk, and when, next to what left on a socket. `-yy` names each fd's
 * file or socket in the trace, so no fd has to be followed through open and close; `-f` follows the
 * libuv threads (an async fdatasync runs there) and the child the shim may start.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBinary } from './helpers.js';
import { missingInfra } from './infra/process.js';

/** One system call: its name, its fd as strace names it (`21</tmp/x/ledger.jsonl>`), its text, and where it started and ended in the trace. */
export interface Call {
  name: string;
  fd: string;
  text: string;
  start: number;
  end: number;
}

/**
 * Why strace cannot be used here (not Linux, not installed, ptrace refused), or undefined when it
 * can; printed when the tests are skipped. Under CI a missing or refused strace fails instead, as
 * for the other tools `.ci/run` installs (test/infra/process.ts).
 */
export function straceMissing(): string | undefined {
  if (process.platform !== 'linux') return skipping(`strace traces Linux system calls; this is ${process.platform}`);
  const missing = missingInfra('strace');
  if (missing) return missing;
  try {
    execFileSync('strace', ['-o', '/dev/null', 'true'], { stdio: 'ignore' });
    return undefined;
  } catch (error) {
    const reason = `strace cannot trace here (${(error as Error).message.split('\n')[0]}): allow ptrace (a container needs CAP_SYS_PTRACE)`;
    if (process.env.CI) throw new Error(`the system-call trace tests need ${reason}`);
    return skipping(reason);
  }
}

function skipping(reason: string): string {
  console.warn(`skipping the system-call trace tests: ${reason}`);
  return reason;
}

const CALLS = 'openat,write,writev,pwrite64,sendto,sendmsg,fdatasync,fsync';

/** Runs `opcli argv` (the built binary) under strace; resolves with its exit code, output and the calls traced. */
export async function traceOpcli(argv: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; calls: Call[] }> {
  const temp = mkdtempSync(join(tmpdir(), 'opcli-strace-'));
  const out = join(temp, 'trace');
  try {
    const wrap: [string, ...string[]] = ['strace', '-f', '-qq', '-yy', '-s', '1048576', '-e', `trace=${CALLS}`, '-o', out];
    const { code, stdout, stderr } = await runBinary(argv, { env, wrap, timeoutMs: 120_000 });
    return { code, stdout, stderr, calls: parseTrace(readFileSync(out, 'utf8')) };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

const WHOLE = /^(\d+)\s+(\w+)\((.*)$/;
const RESUMED = /^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$/;
const UNFINISHED = ' <unfinished ...>';

/** The calls of an strace -f output, a call split by another thread joined again: `start` where it began, `end` where it returned. */
export function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, Call>();
  text.split('\n').forEach((line, at) => {
    const resumed = RESUMED.exec(line);
    if (resumed) {
      const call = open.get(`${resumed[1]} ${resumed[2]}`);
      if (!call) return;
      open.delete(`${resumed[1]} ${resumed[2]}`);
      call.text += resumed[3];
      call.end = at;
      return;
    }
    const whole = WHOLE.exec(line);
    if (!whole) return;
    const [, pid, name, rest] = whole as unknown as [string, string, string, string];
    const fd = /^(\d+<.*?>)(?:, |\)| <unfinished)/.exec(rest)?.[1] ?? '';
    const call: Call = { name, fd, text: rest.endsWith(UNFINISHED) ? rest.slice(0, -UNFINISHED.length) : rest, start: at, end: at };
    calls.push(call);
    if (rest.endsWith(UNFINISHED)) open.set(`${pid} ${name}`, call);
  });
  return calls;
}

/** The path an fd names (`21</tmp/x/f.jsonl>`: `/tmp/x/f.jsonl`). */
export function fdPath(fd: string): string {
  return /^\d+<(.*)>$/.exec(fd)?.[1] ?? '';
}

const WRITES = new Set(['write', 'writev', 'pwrite64', 'sendto', 'sendmsg']);

/** The first write to a TCP socket whose bytes hold `request` (as strace escapes them: a request line such as `POST /v1/claims/offline`). */
export function firstRequest(calls: Call[], request: RegExp): Call | undefined {
  return calls.find((c) => WRITES.has(c.name) && c.fd.includes('TCP') && request.test(c.text));
}

/**
 * What the trace shows of a file before a request left: the writes to it, whether the first write
 * holding the action's `line` was followed by a sync of the file, and whether the `folder` was
 * synced, each returned before the request's first byte was written.
 */
export function durableBefore(calls: Call[], request: Call, file: (path: string) => boolean, folder: string, line: string) {
  const before = calls.filter((c) => c.end < request.start);
  const writes = before.filter((c) => WRITES.has(c.name) && file(fdPath(c.fd)));
  // The first write of an action's line is the group the first request belongs to. A later group's
  // write may already be on its way (a batch writes the next group while the first one's requests
  // leave) and is synced before its own requests, not before this one.
  const first = writes.find((w) => w.text.includes(line));
  const synced = (c: Call) => (c.name === 'fdatasync' || c.name === 'fsync') && first !== undefined && c.start > first.end && returnedZero(c);
  const fileSync = before.find((c) => synced(c) && file(fdPath(c.fd)));
  const folderSync = before.find((c) => c.name === 'fsync' && fdPath(c.fd) === folder && returnedZero(c));
  return { writes, fileSynced: fileSync !== undefined, folderSynced: folderSync !== undefined };
}

/** Whether a call returned 0 (strace pads the `= 0` to a column). */
const returnedZero = (c: Call) => /\)\s+= 0$/.test(c.text);

/** The calls of a trace on a file, a socket or a sync, one a line, for a failure's message. */
export function describeCalls(calls: Call[], keep: (c: Call) => boolean): string {
  return calls
    .filter(keep)
    .map((c) => `${c.start}: ${c.name}(${c.text.slice(0, 160)}`)
    .join('\n');
}
