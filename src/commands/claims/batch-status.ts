/**
 * The status line of a batch on a terminal's stderr: done of total, outcomes, rows/s, requests in
 * flight, the rate the server allows as learnt, any pause, ETA; redrawn in place every 200 ms on a
 * terminal, a plain sentence every 10 s elsewhere (--progress). No formatting per row.
 */
import type { BatchProgress } from '../../claims/results.js';
import type { Deps } from '../../cli/deps.js';
import { count as formatCount } from '../../text/count.js';
import { createProgress, lineWidth, type Progress } from '../../text/progress.js';

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
    if (l.pauseLeftMs > 0) parts.push([`paused ${Math.max(0.1, l.pauseLeftMs / 1000).toFixed(1)}s`, 4]);
  }
  if (s.total !== undefined && rate > 0 && s.total > c.done) parts.push([`ETA ${formatEta(((s.total - c.done) / rate) * 1000)}`, 1]);
  let shown = parts;
  const line = () => shown.map(([text]) => text).join(' · ');
  for (let rank = 6; rank > 0 && line().length > width; rank--) shown = shown.filter(([, r]) => r !== rank);
  return line();
}

/**
 * The status line on stderr, drawn by the progress layer (src/text/progress.ts) in the run's style:
 * redrawn in place every 200 ms on a terminal (notices written above it without tearing it), a plain
 * sentence every 10 s in a log or the accessible mode, nothing with --progress none.
 */
export class StatusTicker {
  private timer?: ReturnType<typeof setInterval>;
  private readonly progress: Progress;

  constructor(
    private readonly deps: Deps,
    private readonly state: () => StatusState,
  ) {
    this.progress = createProgress(deps, 200);
  }

  start(): void {
    if (this.progress.style === 'none') return;
    // A terminal's line is redrawn every 200 ms whatever the run's clock says; a sentence keeps its own pace.
    this.timer = setInterval(() => (this.progress.style === 'line' ? this.draw() : this.tick()), 200);
    this.timer.unref?.();
  }

  line(width = lineWidth(this.deps)): string {
    // A plain sentence is not redrawn, so it need not fit the terminal: every part is kept.
    return statusLine(this.state(), this.progress.style === 'plain' ? Number.POSITIVE_INFINITY : width);
  }

  /** Writes a sentence of the current state if it is time to (a clock reading otherwise); a terminal's line is left to the timer. */
  tick(): void {
    if (this.progress.style === 'plain') this.progress.update(() => this.line());
  }

  draw(): void {
    this.progress.update(() => this.line(), true);
  }

  /** Writes a notice on stderr above the line. */
  notice(text: string): void {
    this.progress.clear();
    this.deps.err(text);
    if (this.progress.style === 'line' && this.timer) this.draw();
  }

  /** Stops the line, leaving its last state on a terminal's screen. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.progress.style !== 'line') return;
    this.draw();
    this.deps.io.stderr.write('\n');
  }
}
