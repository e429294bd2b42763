/** `claims file --from FILE`, composed: paths checked first, the 0.2.0 journals it finds read into the record, then the stages a row passes opened, and the run turned into an exit. */
import { createReadStream, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { ResolvedProfile } from '../config/profile.js';
import { CHECK_UNCERTAIN_ROWS } from '../core/claim-check.js';
import { InterruptedError, OpcliError, PartialFailureError, UsageError } from '../core/errors.js';
import type { PaceClock, Timers } from '../core/timers.js';
import { createAdaptiveLimiter } from '../http/adaptive.js';
import { type RecordPlace, recordPlace } from '../config/record-dir.js';
import { hostName, osUser } from '../config/user-name.js';
import { importJournal, JournalReader, type JournalService, serviceOrigin } from './journal.js';
import { type ClaimsRecord, ClaimRecord, LOCK_WAIT_MS, type OpenClaims, openClaimsRecord, type RecordContext } from './record.js';
import { resolveBatchPaths } from './paths.js';
import { type BatchReport, BatchTally, type BatchView, type Counts, SendPipeline, type SendPorts, type SendResult, UnreachableError } from './pipeline.js';
import { type BatchHistory, compiled, type PlanOptions, Planner, type RowResult, storeMismatch, validateClaim } from './plan.js';
import { checkFileText, detectFormat, lineEnds, openSource, type SourceRow } from './reader.js';
import { OfflineClaim } from '../schemas.js';
import { count, counted } from '../text/count.js';
import type { IO } from '../core/ports.js';

/** What a batch uses of the world: stdin, the working folder, the profile, the record's folder, and the pipeline's ports. */
interface BatchPorts extends Pick<SendPorts, 'http' | 'now' | 'sleep' | 'signal' | 'stopNow'> {
  io: Pick<IO, 'stdin'>;
  cwd: string;
  /** The platform whose rules say when two file names are one file (default: the one running). */
  platform?: NodeJS.Platform;
  configDir(): string;
  profile(): Promise<ResolvedProfile>;
  /** The clock and sleeps the limiter paces the requests by. */
  pace: PaceClock;
  /** The timers a wait for the record's lock (--lock-wait) goes by (default: the wall clock). */
  timers?: Timers;
  /** The environment a record database's credentials are read from (PGPASSWORD, ~/.pgpass: src/record-pg/connection.ts). */
  env?: RecordContext['env'];
}

export interface BatchOptions {
  /** A path, or "-" for standard input. */
  from: string;
  format?: string;
  /** `--delimiter`: the CSV's separator (told from its header otherwise). */
  delimiter?: string;
  /** Upper bound of requests in flight; the limiter finds the server's real limit under it. */
  concurrency: number;
  /** `--rate`: upper bound of requests started per second. */
  rate?: number;
  /** `--journal`: the batch's name (docs/spec-choices.md#the-same-batch; default: <input>.journal.jsonl). */
  journal?: string;
  /** `--lock-wait`: how long to wait for another run holding the record's lock (default 5 s; 0 refuses at once). */
  lockWaitMs?: number;
  retryUncertain: boolean;
  validateOnly: boolean;
  out?: string;
  /** `--key COLUMN`: the user's identifier column is the row's identity. */
  key?: string;
  /** `--allow-similar`: file rows that look like a claim filed earlier. */
  allowSimilar: boolean;
  /** `--allow-duplicates`: file rows the record of claims holds (filed from another file) and rows repeated in this file. */
  allowDuplicates?: boolean;
  /** `--wait-for-service`: how long an outage may last before the batch stops (default: it stops at once). */
  waitForServiceMs?: number;
  /** `--dry-run`: ask the record and say what a real run would do with each row; send and record nothing. */
  dryRun?: boolean;
}

function openInput(from: string, path: string | undefined, deps: Pick<BatchPorts, 'io'>): { stream: Readable; label: string; path?: string } {
  if (from === '-' || !path) return { stream: deps.io.stdin, label: 'standard input' };
  return { stream: createReadStream(path), label: from, path };
}

/** Counts newlines to estimate the rows of a file for the progress line (fast, in the background). */
async function countLines(path: string): Promise<{ lines: number; endsWithNewline: boolean }> {
  let lines = 0;
  let last = 10;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    lines += lineEnds(chunk, 'utf-8');
    if (chunk.length) last = chunk[chunk.length - 1] as number;
  }
  return { lines, endsWithNewline: last === 10 };
}

/** The profile's store and service, when a profile is readable; rows must carry storeId otherwise. */
async function readProfile(deps: Pick<BatchPorts, 'profile'>): Promise<{ storeId?: string; service: JournalService; profile?: ResolvedProfile }> {
  try {
    const profile = await deps.profile();
    const storeId = profile.storeId;
    return { storeId, service: { origin: serviceOrigin(profile.baseUrl), storeId: storeId ?? null, profile: profile.name }, profile };
  } catch {
    return { service: { origin: null, storeId: null } };
  }
}

/** The input's format, once the flags that depend on it and on each other are checked (exit 2). */
function checkedFormat(opts: BatchOptions): ReturnType<typeof detectFormat> {
  const format = detectFormat(opts.from, opts.format);
  if (opts.delimiter !== undefined && format !== 'csv') throw new UsageError(`--delimiter applies to a CSV file; this input is ${format.toUpperCase()}.`);
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1 || opts.concurrency > 64) {
    throw new UsageError(`--concurrency must be a whole number from 1 to 64, got ${opts.concurrency}.`);
  }
  if (opts.from === '-' && !opts.journal && !opts.validateOnly) {
    throw new UsageError(
      'A batch from standard input needs --journal PATH: the name its runs are known by in the record of claims is what makes a rerun safe.',
      'Pass --journal claims.journal.jsonl.',
    );
  }
  return format;
}

/** Runs a batch: validate-only, or send with the record of claims; `view` shows it (nothing here prints). */
export async function runBatch(opts: BatchOptions, deps: BatchPorts, view: BatchView): Promise<void> {
  const format = checkedFormat(opts);
  // Every path is checked before anything is read, sent or written.
  const paths = resolveBatchPaths(opts, deps.cwd, deps.platform);
  const { storeId, service, profile } = await readProfile(deps);
  const store = { origin: service.origin, storeId: service.storeId };
  // The record's folder is checked before anything is read or written (a validation reads no record).
  const place = opts.validateOnly ? undefined : recordPlace(deps.configDir(), profile);
  const openRecord = (lock?: OpenClaims['lock']) =>
    openClaimsRecord(place as RecordPlace, profile, { env: deps.env ?? process.env, cwd: deps.cwd }, { store, lock });
  const provenance = { source: paths.input ?? `standard input (journal ${paths.journal})`, profile: profile?.name ?? 'default', journal: paths.journal };
  const binding = { service, notice: (text: string) => view.notice(text) };
  // A file opcli cannot decode is refused before its first row is read, wherever its first bad byte is.
  if (paths.input) await checkFileText(paths.input, opts.from);
  const input = openInput(opts.from, paths.input, deps);
  const source = await openSource(input.stream, format, {
    defaultStoreId: storeId,
    label: input.label,
    keyColumn: opts.key,
    delimiter: opts.delimiter,
  });
  if (opts.dryRun && !opts.validateOnly) {
    const record = await openRecord();
    try {
      await planAll(opts, paths, source, deps, view, storeId, binding, record);
    } finally {
      await record.close();
      input.stream.destroy?.();
    }
    return;
  }
  let record: ClaimsRecord | undefined;
  let journal: JournalReader | undefined;
  try {
    // The record of claims for this store (a file: under its lock for the run, two runs at once take
    // turns): a damaged or unreachable one stops here, before the results file is created and anything is sent.
    if (!opts.validateOnly) record = await openRecord({ waitMs: opts.lockWaitMs ?? LOCK_WAIT_MS, timers: deps.timers });
    // A journal of an earlier version is read into a file record; the team's database takes files by
    // `opcli record import`, so the resume reads one it finds at the batch's name beside the database's answers.
    if (record instanceof ClaimRecord)
      await importEarlier(record, paths.journal as string, provenance.profile, (text) => view.notice(text), {
        folder: paths.input && dirname(paths.input),
        service,
      });
    else if (record) journal = await JournalReader.snapshot(paths.journal as string, binding);
    const limiter = record && createAdaptiveLimiter({ maxConcurrency: opts.concurrency, maxRate: opts.rate, ...deps.pace });
    const tally = new BatchTally(deps.now, limiter);
    const reporter = view.report(source, { out: paths.out, verb: opts.validateOnly ? 'validate' : 'send' }, () => tally.progress());
    if (reporter.drawsProgress && input.path && format !== 'json') estimateTotal(input.path, format, tally);
    await reporter.start();
    if (!record || !limiter) await validateAll(source.rows, reporter, tally, deps, view, opts, storeId);
    else {
      const batch = paths.journal as string;
      const planner = new Planner(historyOf(record, batch, journal), { ...plannerOptions(opts, storeId, record), provenance });
      const ports: SendPorts = {
        http: () => deps.http(),
        now: deps.now,
        sleep: deps.sleep,
        signal: deps.signal,
        stopNow: deps.stopNow,
        record,
        batch,
        limiter,
        tally,
        report: reporter,
        view,
      };
      const pipeline = new SendPipeline({ concurrency: opts.concurrency, waitForServiceMs: opts.waitForServiceMs, tokenStore: storeId }, ports, planner);
      verdict(await pipeline.run(source), tally.counts, deps.signal, view, opts);
    }
  } finally {
    input.stream.destroy?.();
    await journal?.closeReader();
    await record?.closeDurable();
  }
}

/** The input's rows, estimated from its lines for the status line (in the background). */
function estimateTotal(path: string, format: string, tally: BatchTally): void {
  countLines(path)
    .then(({ lines, endsWithNewline }) => tally.estimate(Math.max(0, lines + (endsWithNewline ? 0 : 1) - (format === 'csv' ? 1 : 0))))
    .catch(() => {});
}

/** What the planner of a run and of a dry run share: the batch's flags, the token's store, the record. */
function plannerOptions(opts: BatchOptions, storeId: string | undefined, record: ClaimsRecord): PlanOptions {
  return {
    keyColumn: opts.key,
    allowSimilar: opts.allowSimilar,
    allowDuplicates: !!opts.allowDuplicates,
    retryUncertain: opts.retryUncertain,
    tokenStore: storeId,
    record,
  };
}

/** `--dry-run`: each row checked and keyed against the record (read, not locked) as a real run would; nothing sent; exit 3 if any unfiled. */
async function planAll(
  opts: BatchOptions,
  paths: { journal?: string; out?: string },
  source: Awaited<ReturnType<typeof openSource>>,
  deps: Pick<BatchPorts, 'now' | 'signal'>,
  view: BatchView,
  storeId: string | undefined,
  binding: { service: JournalService; notice: (text: string) => void },
  record: ClaimsRecord,
): Promise<void> {
  const journal = await JournalReader.snapshot(paths.journal as string, binding);
  const tally = new BatchTally(deps.now);
  const reporter = view.report(source, { out: paths.out, verb: 'plan' }, () => tally.progress());
  const c = tally.counts;
  const rows = (n: number) => counted(n, 'row');
  try {
    await reporter.start();
    const planner = new Planner(historyOf(record, paths.journal as string, journal), plannerOptions(opts, storeId, record));
    const decide = async (row: SourceRow): Promise<RowResult> => {
      const plan = await planner.plan(row);
      return plan.send ? { line: row.line, status: 'valid' } : plan.result;
    };
    await reportEach(source.rows, { reporter, tally, signal: deps.signal, view }, decide, () => {
      const earlier = c.filedEarlier + c.rejectedEarlier + c.uncertainEarlier;
      return (
        `Dry run of ${rows(c.done)}: ${count(c.valid)} would be sent, ${count(c.invalid)} would be refused (invalid), ${count(c.held)} would be held` +
        `${earlier ? `, ${count(earlier)} settled by an earlier run would not be sent again (${count(c.filedEarlier)} filed, ${count(c.rejectedEarlier)} rejected, ${count(c.uncertainEarlier)} uncertain)` : ''}. Nothing was sent and nothing was recorded.\n`
      );
    });
  } finally {
    await journal.closeReader();
  }
  const unfiled = c.invalid + c.held + c.rejectedEarlier + c.uncertainEarlier;
  if (unfiled > 0) {
    throw new PartialFailureError(
      `A real run would not file ${rows(unfiled)}.`,
      'Fix the invalid rows and check the held ones named above (--allow-duplicates files rows filed already, --allow-similar rows that look like earlier claims); uncertain rows need --retry-uncertain.',
    );
  }
}

/** `--validate-only`: each row checked as a send would check it before anything leaves; nothing sent or journaled. */
async function validateAll(
  rows: AsyncGenerator<SourceRow>,
  reporter: BatchReport,
  tally: BatchTally,
  deps: Pick<BatchPorts, 'signal'>,
  view: BatchView,
  opts: BatchOptions,
  tokenStore: string | undefined,
): Promise<void> {
  const schema = compiled(OfflineClaim);
  const decide = (row: SourceRow): RowResult => {
    const checked = validateClaim(row.value, row.issues, schema);
    // The checks a send makes before anything leaves, but the record's.
    const local = [
      ...(opts.key !== undefined && !row.userKey ? [{ path: opts.key, message: `the --key column ${opts.key} is empty` }] : []),
      ...(checked.ok && tokenStore && checked.claim.storeId !== tokenStore
        ? [{ path: 'storeId', message: storeMismatch(checked.claim.storeId, tokenStore) }]
        : []),
    ];
    if (checked.ok && !local.length) return { line: row.line, status: 'valid' };
    return { line: row.line, status: 'invalid', errors: [...(checked.ok ? [] : checked.issues), ...local] };
  };
  const c = tally.counts;
  await reportEach(rows, { reporter, tally, signal: deps.signal, view }, decide, () => {
    return `Checked ${counted(c.done, 'row')}: ${count(c.valid)} valid, ${count(c.invalid)} invalid. Nothing was sent.\n`;
  });
  if (c.invalid > 0)
    throw new PartialFailureError(`${c.invalid} row${c.invalid === 1 ? ' is' : 's are'} invalid.`, 'Fix the rows named above, then run again.');
}

/** The rows of a run that sends nothing (dry run, validation), each decided, counted and reported; then the closing line, then any failure. */
async function reportEach(
  rows: AsyncGenerator<SourceRow>,
  to: { reporter: BatchReport; tally: BatchTally; signal: AbortSignal; view: BatchView },
  decide: (row: SourceRow) => RowResult | Promise<RowResult>,
  closing: () => string,
): Promise<void> {
  let interrupted = false;
  let fatal: unknown;
  try {
    for await (const row of rows) {
      if (to.signal.aborted) {
        interrupted = true;
        break;
      }
      const result = await decide(row);
      to.tally.count(result);
      const output = to.reporter.add(row, result);
      if (output) await output;
    }
  } catch (error) {
    fatal = error;
  }
  await to.reporter.finish();
  to.view.notice(closing());
  if (fatal) throw fatal;
  if (interrupted) throw new InterruptedError();
}

/** What a finished send run means: the error (and exit code) after the summary, or none when every row is settled. */
function verdict(result: SendResult, c: Readonly<Counts>, signal: AbortSignal, view: BatchView, opts: BatchOptions): void {
  const { fatal, stopError, readError } = result;
  if (result.stoppedNow) throw new InterruptedError('Stopped at once: the rows listed as in flight may or may not have been filed.');
  if (result.unreachable) throw new UnreachableError(c.done === 1 ? 'The row was not filed' : 'No row was filed', result.unreachable);
  if (fatal) throw fatal;
  if (stopError) {
    if (stopError instanceof OpcliError) throw stopError;
    throw new OpcliError(`The batch stopped: ${(stopError as Error).message}`);
  }
  if (signal.aborted) {
    view.notice('Interrupted: no new rows were sent; the rows in flight finished and are in the record of claims. Run the same command to go on.\n');
    throw new InterruptedError();
  }
  if (readError) {
    // Nothing sent: the file is what is wrong (exit 2). Something sent: the batch is partial (exit 3).
    if (c.sent === 0) throw readError;
    const message = (readError instanceof Error ? readError.message : String(readError)).replace(/\.$/, '');
    throw new PartialFailureError(
      `${message}. The ${count(c.done)} rows before it were handled (${count(c.filed)} filed now); nothing from that line on was read.`,
      'Fix the file from that line on and run the same command again: rows already filed are skipped.',
    );
  }
  const unsettled = c.rejected + c.rejectedEarlier + c.invalid + c.held + c.uncertain + c.uncertainEarlier + c.notSent;
  if (unsettled > 0) {
    const hints: string[] = [];
    if (c.invalid + c.rejected + c.rejectedEarlier > 0) {
      hints.push(
        'Fix the invalid and rejected rows named above (in place or anywhere in the file) and run the same command again: a row is known by its content, so rows filed, rejected or uncertain are not sent again, whatever their line.',
      );
    }
    if (c.notSent > 0) hints.push('Rows not sent are sent by the next run.');
    if (c.held > 0) {
      hints.push(
        opts.key
          ? 'Held rows reuse a --key value already filed with other content: check them; a new claim needs its own key.'
          : 'Held rows were filed already (from another file, or repeated in this one: --allow-duplicates files them) or look like claims filed earlier (--allow-similar files them): check them first.',
      );
    }
    if (c.uncertain + c.uncertainEarlier > 0) hints.push(`The uncertain rows may exist. ${CHECK_UNCERTAIN_ROWS}`);
    throw new PartialFailureError(`${count(unsettled)} of ${counted(c.done, 'row')} ${unsettled === 1 ? 'was' : 'were'} not filed.`, hints.join('\n'));
  }
}

/** Reads the 0.2.0 journal at the batch's name, and those beside the input, into the record once each, saying how many claims came. */
async function importEarlier(
  record: ClaimRecord,
  journal: string,
  profile: string,
  notice: (text: string) => void,
  beside: { folder?: string; service: JournalService },
): Promise<void> {
  // CHOICE (docs/spec-choices.md#record-of-claims): a journal of an earlier version is read into the record once, so copies of its file are held too.
  // Read each run for its damage; its notices said once, on the run that reads it in.
  const tell = record.imported.has(journal) ? undefined : notice;
  const reader = await JournalReader.snapshot(journal, { service: beside.service, notice: tell });
  let taken: number;
  try {
    taken = await importJournal(record, reader, profile, osUser(), hostName());
  } finally {
    await reader.closeReader();
  }
  const holds = (n: number, from: string, copy: string) =>
    n > 0 &&
    notice(
      `Notice: the record of claims ${record.path} now holds the ${count(n)} claim${n === 1 ? '' : 's'} ${from} filed or possibly filed, so a copy of ${copy} does not file them again.\n`,
    );
  // And so are the journals beside the input: a copy of a file filed by an earlier version may run before the file itself.
  if (beside.folder) {
    const others = await importBeside(record, beside.folder, { service: beside.service, profile, user: osUser(), host: hostName() }, notice);
    holds(others, `the journals beside ${beside.folder} show`, 'their files');
  }
  // What was read in is asked of next (the resume, the copies): the index is brought up to the file.
  record.reindex();
  holds(taken, `the journal ${journal} shows`, 'this file');
}

/**
 * The journals beside the input (`*.journal.jsonl` in `folder`), each read in once, so a copy of a
 * file 0.2.0 filed is held even when it runs before the original; one that cannot be read is passed
 * over with a notice.
 */
async function importBeside(
  record: ClaimRecord,
  folder: string,
  by: { service: JournalService; profile: string; user: string; host: string },
  notice: (text: string) => void,
): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return 0;
  }
  let taken = 0;
  for (const name of names.filter((n) => n.endsWith('.journal.jsonl')).sort()) {
    const path = resolve(join(folder, name));
    if (record.imported.has(path)) continue;
    let reader: JournalReader | undefined;
    try {
      reader = await JournalReader.snapshot(path, { service: by.service });
      taken += await importJournal(record, reader, by.profile, by.user, by.host);
    } catch (error) {
      notice(
        `Notice: the journal ${path} beside the input cannot be read (${(error as Error).message.split('\n')[0]}): a copy of its file is held only once that file runs again.\n`,
      );
    } finally {
      await reader?.closeReader();
    }
  }
  return taken;
}

/** What earlier runs of `batch` did with a row: the record's answer, else a 0.2.0 journal's it has not read in (dry run, database). */
export function historyOf(record: ClaimsRecord, batch: string, journal?: JournalReader): BatchHistory {
  const read = record instanceof ClaimRecord ? record.imported : undefined;
  const unread = journal && journal.priorEntries > 0 && !read?.has(journal.path) ? journal : undefined;
  if (!unread) return { batch, batchRow: (b, by) => record.batchRow(b, by) };
  return {
    batch,
    async batchRow(b, by) {
      const row = await record.batchRow(b, by);
      const prior = row ? undefined : 'key' in by ? unread.priorOutcome(by.key) : unread.similarTo(by.like);
      if (!prior) return row;
      const sent = await unread.entryAt(prior.sendOffset);
      return { status: prior.status, line: sent?.line, at: sent?.at, tag: prior.tag, claim: sent?.claim, ...(await unread.priorDetail(prior)) };
    },
  };
}
