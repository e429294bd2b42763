/**
 * Where a batch's per-row results go: one JSON line per row on stdout (--jsonl) and the results CSV
 * (--out: the input's columns plus status, sourceOrderId and error, with the input's separator). A slow reader holds the batch
 * back; a stream that fails (a full disk under --out) stops it instead of losing rows.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { stringify } from 'csv-stringify/sync';
import { openBatchFile, RESULTS_ROLE } from '../../claims/batch-files.js';
import type { Writable } from 'node:stream';
import { CLAIM_FIELDS, flattenClaim } from '../../claims/fields.js';
import type { SourceRow } from '../../claims/reader.js';
import type { RowResult } from '../../claims/results.js';
import { OpcliError } from '../../core/errors.js';

/** Waits until a stream has room again; a stream that failed rejects instead of never draining. */
export async function writeWithBackpressure(stream: Writable, text: string): Promise<void> {
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

/** The results CSV of --out. */
export class ResultsFile {
  private out?: WriteStream;

  constructor(
    private readonly path: string,
    private readonly header: string[] | undefined,
    /** The input CSV's separator: the results open in the spreadsheet the input came from. */
    private readonly delimiter = ',',
  ) {}

  /**
   * Creates the file (0600: it holds customers' personal data), or empties an existing one of yours
   * (batch-files.ts: never through a link, never another user's), and writes its header.
   */
  async open(): Promise<void> {
    const { handle } = await openBatchFile(this.path, RESULTS_ROLE, 'truncate');
    const out = createWriteStream('', { fd: handle, encoding: 'utf8' });
    this.out = out;
    // A write error is read from `errored` by the next write, which stops the batch.
    out.on('error', () => {});
    await this.write([...(this.header ?? CLAIM_FIELDS.map((f) => f.key)), 'status', 'sourceOrderId', 'error']);
  }

  /** The row's cells as read (or its fields, for JSON input) with its outcome. */
  async row(row: SourceRow, result: RowResult): Promise<void> {
    const cells =
      row.cells ??
      (() => {
        const flat = flattenClaim(row.value);
        return CLAIM_FIELDS.map((f) => flat[f.key] ?? '');
      })();
    const error = result.error ?? result.errors?.map((e) => `${e.path || '(row)'}: ${e.message}`).join('; ') ?? '';
    await this.write([...cells, result.status, result.sourceOrderId ?? '', error]);
  }

  private async write(cells: string[]): Promise<void> {
    if (!this.out) return;
    try {
      await writeWithBackpressure(this.out, stringify([cells], { delimiter: this.delimiter }));
    } catch (error) {
      throw this.failed(error);
    }
  }

  async close(): Promise<void> {
    const out = this.out;
    if (!out) return;
    const failure = await new Promise<Error | null>((resolve) => out.end((error?: Error | null) => resolve(error ?? out.errored)));
    if (failure) throw this.failed(failure);
  }

  private failed(error: unknown): OpcliError {
    return new OpcliError(`Cannot write the results file ${this.path}: ${(error as Error).message}`, {
      hint: 'Free disk space or pass --out with a writable path, then run the same command again: rows already filed are skipped.',
      cause: error,
    });
  }
}
