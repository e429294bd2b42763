/**
 * When a process started, as the kernel counts it, so a lock can tell its owner from a process that
 * merely has its pid. On Linux: the boot's id and the start in clock ticks since boot (field 22 of
 * /proc/<pid>/stat, proc(5)), which neither a clock change nor the process can alter; elsewhere unknown.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc's times; 100 on every architecture Node runs on (sysconf(_SC_CLK_TCK)). */
const TICKS_PER_SECOND = 100;

function procText(path: string): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function startTicks(pid: number): number | undefined {
  const stat = procText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // "pid (name) state ppid …": the fields after the last ")" (a name may hold one) start at field 3.
  const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  return Number.isInteger(ticks) ? ticks : undefined;
}

/** `<boot id>:<start ticks>` of `pid`: equal for the same process, different for any other; undefined where unknown. */
export function processStart(pid: number): string | undefined {
  const boot = procText('/proc/sys/kernel/random/boot_id')?.trim();
  const ticks = startTicks(pid);
  return boot && ticks !== undefined ? `${boot}:${ticks}` : undefined;
}

/** When `pid` started, in ms since the epoch, by today's clock (a clock changed since moves it); undefined where unknown. */
export function processStartedAt(pid: number): number | undefined {
  const btime = /^btime (\d+)$/m.exec(procText('/proc/stat') ?? '')?.[1];
  const ticks = startTicks(pid);
  if (btime === undefined || ticks === undefined) return undefined;
  return Number(btime) * 1000 + (ticks * 1000) / TICKS_PER_SECOND;
}

/** Whether a process that answers signals has exited and waits to be reaped (Linux state Z: an init that reaps late, or none). */
export function hasExited(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (name) S ...": the state follows the last ")" (a name may hold one).
    return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
