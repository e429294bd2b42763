/**
 * The status line of a batch on a terminal's stderr: done of total, outcomes, rows/s, requests in
 * flight, the rate the server allows as learnt, any pause, ETA; redrawn in place every 200 ms. No
 * work at all per row, and none when stderr is not a terminal.
 */
import type { BatchProgress } from '../../claims/results.js';
import type { Deps } from '../../deps.js';
import { count as formatCount } from '../../text/count.js';
import { safeLine } from '../../text/safe.js';

function formatRate(rate: number): string {
  return rate >= 10 ? String(Math.round(rate)) : rate.toFixed(1);
}

function formatEta(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** What the status line shows: the batch's progress (asked of it at each draw), the verb and the time now. */
export interface StatusState extends BatchProgress {
  verb: 'send' | 'validate' | 'plan';
  now: number;
}

/**
 * The status line. It must fit the terminal (a wrapped line cannot be redrawn in place): "0 in
 * flight" and zero counts go first, then the limiter's details, then the ETA.
 */
export function statusLine(s: StatusState, width: number): string {
  const c = s.counts;
  const rate = (c.done * 1000) / Math.max(1, s.elapsedMs);
  const total = s.total !== undefined ? `${s.totalApproximate ? '~' : ''}${formatCount(s.total)}` : '?';
  /** Each part with the rank at which it is dropped when the line is too wide (0: never). */
  const parts: [string, number][] = [[`${formatCount(c.done)}/${total} rows`, 0]];
  const count = (n: number, label: string): [string, number] => [`${formatCount(n)} ${label}`, n === 0 ? 5 : 0];
  if (s.verb === 'send') {
    parts.push(
      [`${formatCount(c.filed + c.filedEarlier)} filed`, 0],
      count(c.rejected + c.rejectedEarlier, 'rejected'),
      count(c.invalid, 'invalid'),
      count(c.uncertain + c.uncertainEarlier, 'uncertain'),
    );
    if (c.held) parts.push(count(c.held, 'held'));
  } else {
    parts.push(count(c.valid, 'valid'), count(c.invalid, 'invalid'));
  }
  parts.push([`${formatRate(rate)} rows/s`, 0]);
  if (s.limits) {
    const l = s.limits;
    parts.push([`${l.inFlight} in flight`, l.inFlight === 0 ? 6 : 2]);
    // The rate the limiter settled on after the server's refusals (or its headers), or --rate.
    if (l.learnt !== undefined) parts.push([`server allows ~${formatRate(l.learnt)}/s`, 3]);
    if (l.pausedUntil > 0) parts.push([`paused ${Math.max(0.1, (l.pausedUntil - s.now) / 1000).toFixed(1)}s`, 4]);
  }
  if (s.total !== undefined && rate > 0 && s.total > c.done) parts.push([`ETA ${formatEta(((s.total - c.done) / rate) * 1000)}`, 1]);
  let shown = parts;
  const line = () => shown.map(([text]) => text).join(' · ');
  for (let rank = 6; rank > 0 && line().length > width; rank--) shown = shown.filter(([, r]) => r !== rank);
  return line();
}

/** The line redrawn in place on stderr; notices are written above it without tearing it. */
export class StatusTicker {
  private timer?: ReturnType<typeof setInterval>;
  private shown = false;

  constructor(
    private readonly deps: Deps,
    private readonly state: () => StatusState,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.draw(), 200);
    this.timer.unref?.();
  }

  /** The terminal's width for the status line (COLUMNS, else 80). */
  private width(): number {
    const columns = (this.deps.io.stderr as { columns?: number }).columns ?? Number(this.deps.env.COLUMNS);
    return Number.isInteger(columns) && columns > 20 ? columns - 1 : 79;
  }

  line(width = this.width()): string {
    return statusLine(this.state(), width);
  }

  draw(): void {
    this.deps.io.stderr.write(`\r\x1b[2K${safeLine(this.line())}`);
    this.shown = true;
  }

  /** Writes a notice on stderr above the line. */
  notice(text: string): void {
    if (this.shown) this.deps.io.stderr.write('\r\x1b[2K');
    this.deps.err(text);
    if (this.shown) this.draw();
  }

  /** Stops the line, leaving its last state on screen. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.draw();
    this.deps.io.stderr.write('\n');
  }
}
