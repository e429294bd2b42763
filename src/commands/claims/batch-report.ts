/**
 * What a batch shows: per-row results in input order (--jsonl on stdout, --out results CSV), a
 * progress line on a terminal's stderr, problem rows and the summary on stderr.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { BatchReport, Counts, RowResult } from '../../claims/results.js';
import type { Deps } from '../../deps.js';
import { OpcliError } from '../../errors.js';
import type { RequestLimiter } from '../../http/adaptive.js';
import { safeLine } from '../../text/safe.js';
import { CLAIM_FIELDS, flattenClaim } from '../../claims/fields.js';
import type { RowSource, SourceRow } from '../../claims/reader.js';

/**
 * Waits until a stream has room again, so a slow reader of stdout holds the batch back. A stream
 * that failed (a full disk under --out) rejects, instead of losing rows silently or never draining.
 */
async function writeWithBackpressure(stream: Writable, text: string): Promise<void> {
  if (stream.errored) throw stream.errored;
  if (stream.write(text)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      if (error instanceof Error) reject(error);
      else if (stream.errored) reject(stream.errored);
      else resolve();
    };
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
  });
}

function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

function formatRate(rate: number): string {
  return rate >= 10 ? String(Math.round(rate)) : rate.toFixed(1);
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * How many finished rows may wait for an earlier one (a slow request) before the batch stops reading
 * new rows, so memory stays flat whatever the input size.
 */
export const MAX_WAITING = 1_000;

export class BatchReporter implements BatchReport {
  readonly counts: Counts = {
    filed: 0,
    filedEarlier: 0,
    rejected: 0,
    rejectedEarlier: 0,
    invalid: 0,
    held: 0,
    uncertain: 0,
    uncertainEarlier: 0,
    notSent: 0,
    valid: 0,
    sent: 0,
    done: 0,
  };
  /** Rows done but waiting for an earlier row, so outputs stay in input order. */
  private readonly waiting = new Map<number, { row: SourceRow; result: RowResult }>();
  private nextSeq = 0;
  private draining = false;
  /** Readers waiting for `waiting` to shrink below MAX_WAITING. */
  private roomWaiters: (() => void)[] = [];
  private out?: WriteStream;
  private outColumns: string[] = [];
  private timer?: ReturnType<typeof setInterval>;
  private progressShown = false;
  private readonly started: number;
  total?: number;
  totalApproximate = false;
  /** The batch's limiter, when sending: its state joins the progress line and the summary. */
  limiter?: RequestLimiter;

  constructor(
    private readonly deps: Deps,
    private readonly source: RowSource,
    private readonly options: { jsonl: boolean; out?: string; progress: boolean; verb: 'send' | 'validate' },
  ) {
    this.started = deps.now();
  }

  /** Opens the results file and starts the progress line. */
  async start(): Promise<void> {
    if (this.options.out) {
      // It holds customers' personal data: readable by its owner only.
      this.out = createWriteStream(this.options.out, { encoding: 'utf8', mode: 0o600 });
      await new Promise<void>((resolve, reject) => {
        this.out?.once('open', () => resolve());
        this.out?.once('error', reject);
      });
      // A write error is read from `errored` by the next write, which stops the batch.
      this.out.on('error', () => {});
      this.outColumns = [...(this.source.header ?? CLAIM_FIELDS.map((f) => f.key)), 'status', 'sourceOrderId', 'error'];
      await this.writeOut(this.outColumns);
    }
    if (this.options.progress) {
      this.timer = setInterval(() => this.drawProgress(), 200);
      this.timer.unref?.();
    }
  }

  private async writeOut(cells: string[]): Promise<void> {
    if (!this.out) return;
    const { stringify } = await import('csv-stringify/sync');
    try {
      await writeWithBackpressure(this.out, stringify([cells]));
    } catch (error) {
      throw this.outError(error);
    }
  }

  private outError(error: unknown): OpcliError {
    return new OpcliError(`Cannot write the results file ${this.options.out}: ${(error as Error).message}`, {
      hint: 'Free disk space or pass --out with a writable path, then run the same command again: rows already filed are skipped.',
      cause: error,
    });
  }

  /** Results are printed per row (--jsonl or --out): each row's sourceOrderId and error are needed. */
  get perRow(): boolean {
    return this.options.jsonl || this.out !== undefined;
  }

  /** Rows waiting for an earlier row to finish, for their turn in the output. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /**
   * Undefined while there is room for more rows; else a promise that resolves once the rows waiting
   * for an earlier one are fewer than MAX_WAITING. The batch awaits it before reading a row.
   */
  room(): Promise<void> | undefined {
    if (this.waiting.size < MAX_WAITING) return undefined;
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Records a row's result; outputs are released in input order. */
  add(row: SourceRow, result: RowResult): Promise<void> | undefined {
    this.count(result);
    if (result.status !== 'filed' && result.status !== 'valid') {
      if (!result.earlier && !this.options.jsonl) this.problem(result);
    }
    if (!this.options.jsonl && !this.out) {
      this.nextSeq = Math.max(this.nextSeq, row.seq + 1);
      return undefined;
    }
    return this.release(row, result);
  }

  private async release(row: SourceRow, result: RowResult): Promise<void> {
    this.waiting.set(row.seq, { row, result });
    // One drain at a time: a second one would write its rows while the first awaits a write.
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.waiting.has(this.nextSeq)) {
        const item = this.waiting.get(this.nextSeq) as { row: SourceRow; result: RowResult };
        this.waiting.delete(this.nextSeq);
        this.nextSeq++;
        await this.emit(item.row, item.result);
      }
    } finally {
      this.draining = false;
    }
    if (this.roomWaiters.length && this.waiting.size < MAX_WAITING) {
      const waiters = this.roomWaiters;
      this.roomWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private count(result: RowResult): void {
    const c = this.counts;
    c.done++;
    switch (result.status) {
      case 'filed':
        if (result.earlier) c.filedEarlier++;
        else c.filed++;
        break;
      case 'rejected':
        if (result.earlier) c.rejectedEarlier++;
        else c.rejected++;
        break;
      case 'invalid':
        c.invalid++;
        break;
      case 'held':
        c.held++;
        break;
      case 'uncertain':
        if (result.earlier) c.uncertainEarlier++;
        else c.uncertain++;
        break;
      case 'not_sent':
        c.notSent++;
        break;
      case 'valid':
        c.valid++;
        break;
    }
  }

  private async emit(row: SourceRow, result: RowResult): Promise<void> {
    if (this.options.jsonl) await writeWithBackpressure(this.deps.io.stdout, `${JSON.stringify(result)}\n`);
    if (this.out) {
      const cells =
        row.cells ??
        (() => {
          const flat = flattenClaim(row.value);
          return CLAIM_FIELDS.map((f) => flat[f.key] ?? '');
        })();
      const error = result.error ?? result.errors?.map((e) => `${e.path || '(row)'}: ${e.message}`).join('; ') ?? '';
      await this.writeOut([...cells, result.status, result.sourceOrderId ?? '', error]);
    }
  }

  /** A row that did not get filed, on stderr with its line, field paths and expectations (user and server text made safe). */
  private problem(result: RowResult): void {
    const where = `${this.source.unit} ${result.line}`;
    let text: string;
    if (result.status === 'held') {
      text = `${where}: ${safeLine(result.error ?? '')}\n`;
    } else if (result.errors?.length) {
      const head = result.status === 'invalid' ? `${where}: invalid, not sent` : `${where}: ${result.status}: ${safeLine(result.error ?? '')}`;
      text = `${head}\n${result.errors.map((e) => `  ${safeLine(e.path || '(row)')}: ${safeLine(e.message)}`).join('\n')}\n`;
    } else {
      text = `${where}: ${result.status.replace('_', ' ')}: ${safeLine(result.error ?? '')}\n`;
    }
    this.notice(text);
  }

  /** Writes a notice on stderr without tearing the progress line. */
  notice(text: string): void {
    this.clearProgress();
    this.deps.err(text);
    if (this.progressShown) this.drawProgress();
  }

  private clearProgress(): void {
    if (this.options.progress && this.progressShown) this.deps.io.stderr.write('\r\x1b[2K');
  }

  /**
   * The status line: done of total, filed, rejected, invalid, uncertain, rows/s, requests in flight,
   * the rate the server allows as learnt, any pause, ETA. It must fit the terminal (a wrapped line
   * cannot be redrawn in place): "0 in flight" and zero counts go first, then the limiter's details, then the ETA.
   */
  progressLine(width = this.width()): string {
    const c = this.counts;
    const elapsed = Math.max(1, this.deps.now() - this.started);
    const rate = (c.done * 1000) / elapsed;
    const total = this.total !== undefined ? `${this.totalApproximate ? '~' : ''}${formatCount(this.total)}` : '?';
    /** Each part with the rank at which it is dropped when the line is too wide (0: never). */
    const parts: [string, number][] = [[`${formatCount(c.done)}/${total} rows`, 0]];
    const count = (n: number, label: string): [string, number] => [`${formatCount(n)} ${label}`, n === 0 ? 5 : 0];
    if (this.options.verb === 'send') {
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
    if (this.limiter) {
      const l = this.limiter.snapshot();
      parts.push([`${l.inFlight} in flight`, l.inFlight === 0 ? 6 : 2]);
      // The rate the limiter settled on after the server's refusals (or its headers), or --rate.
      if (l.rate !== undefined) parts.push([`server allows ~${formatRate(l.rate)}/s`, 3]);
      if (l.pausedUntil > 0) parts.push([`paused ${Math.max(0.1, (l.pausedUntil - this.deps.now()) / 1000).toFixed(1)}s`, 4]);
    }
    if (this.total !== undefined && rate > 0 && this.total > c.done) parts.push([`ETA ${formatDuration(((this.total - c.done) / rate) * 1000)}`, 1]);
    let shown = parts;
    const line = () => shown.map(([text]) => text).join(' · ');
    for (let rank = 6; rank > 0 && line().length > width; rank--) shown = shown.filter(([, r]) => r !== rank);
    return line();
  }

  /** The terminal's width for the status line (COLUMNS, else 80). */
  private width(): number {
    const columns = (this.deps.io.stderr as { columns?: number }).columns ?? Number(this.deps.env.COLUMNS);
    return Number.isInteger(columns) && columns > 20 ? columns - 1 : 79;
  }

  private drawProgress(): void {
    if (!this.options.progress) return;
    this.deps.io.stderr.write(`\r\x1b[2K${safeLine(this.progressLine())}`);
    this.progressShown = true;
  }

  /** Stops the progress line (leaving its last state on screen) and closes the results file. */
  async finish(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.options.progress) {
      this.drawProgress();
      this.deps.io.stderr.write('\n');
    }
    // Anything still waiting (a gap cannot happen: every pulled row completes) goes out in order.
    for (const seq of [...this.waiting.keys()].sort((a, b) => a - b)) {
      const item = this.waiting.get(seq) as { row: SourceRow; result: RowResult };
      await this.emit(item.row, item.result);
    }
    this.waiting.clear();
    for (const resolve of this.roomWaiters.splice(0)) resolve();
    if (this.out) {
      const out = this.out;
      const failure = await new Promise<Error | null>((resolve) => out.end((error?: Error | null) => resolve(error ?? out.errored)));
      if (failure) throw this.outError(failure);
    }
  }

  /** "lines" or "items", for messages that list positions. */
  unitName(): string {
    return `${this.source.unit}s`;
  }

  /** Milliseconds since the batch started. */
  elapsed(): number {
    return this.deps.now() - this.started;
  }
}
