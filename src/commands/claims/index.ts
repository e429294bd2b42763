/**
 * `opcli claims` and `claims file`: one claim (asks for what is missing on a terminal) or a batch
 * (--from: runBatch with this terminal's view, below), each loaded when `file` runs.
 */
import { type Command, Option } from 'commander';
import type { BatchOptions } from '../../claims/batch.js';
import type { RowResult } from '../../claims/plan.js';
import type { RowSource, SourceRow } from '../../claims/reader.js';
import type { ClaimField } from '../../claims/fields.js';
import type { FieldFlags, AskField } from '../../claims/single.js';
import type { Deps } from '../../cli/deps.js';
import { lazyGroup, lazyVerb } from '../../cli/program.js';
import { UsageError, OpcliError } from '../../core/errors.js';
import { parseDuration, parseRate, completesWith, completeValues } from '../../core/flags.js';
import { jsonFields, pickFields } from '../../core/json-fields.js';
import type { OfflineClaim } from '../../schemas.js';
import { alignedLines, printJson } from '../../core/output.js';
import { safeLine } from '../../text/safe.js';
import type { BatchView, BatchProgress, BatchReport, BatchSummary } from '../../claims/pipeline.js';
import { progressStyle, createProgress, lineWidth, type Progress } from '../../text/progress.js';
import { count as formatCount, count, counted } from '../../text/count.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { openBatchFile, RESULTS_ROLE } from '../../claims/batch-files.js';
import type { Writable } from 'node:stream';
import { CHECK_UNCERTAIN_ROWS } from '../../core/claim-check.js';

/** `opcli claims`: file warranty claims, one at a time or in resumable batches. */
export const register = lazyGroup({
  name: 'claims',
  description: 'File warranty claims, one or in batches from CSV/JSONL',
  examples: `  $ opcli claims file --data claim.json
  $ opcli claims template --csv > claims.csv
  $ opcli claims file --from claims.csv --concurrency 8
  $ opcli claims history --since 2026-11-01`,
  verbs: {
    file: async (group, deps) => registerFile(group, deps, (await import('../../claims/fields.js')).CLAIM_FIELDS),
    template: lazyVerb(() => import('./template.js')),
    history: lazyVerb(() => import('./history.js')),
    repair: lazyVerb(() => import('./repair.js')),
  },
});

/** Options of `claims file`: one claim (fields, --data) or a batch (--from, the batch's own options). */
interface FileOptions extends Omit<BatchOptions, 'from'> {
  fields: FieldFlags;
  data?: string;
  from?: string;
  dryRun: boolean;
  /** `--json`: the created claim (a batch: a JSON summary). */
  json: boolean;
  /** `--jsonl`: one JSON result per row of a batch on stdout. */
  jsonl: boolean;
  /** `--force`: file one claim even when the record of claims holds it. */
  force?: boolean;
  /** `--yes`: file one claim without showing it for confirmation on a terminal. */
  yes?: boolean;
  /** `--jsonl FIELDS`: only these fields of each row's result. */
  resultFields?: string[];
}

/** The fields of a row's result line (`--jsonl`), which `--jsonl FIELDS` selects from (docs/json.md). */
const RESULT_FIELDS = ['line', 'status', 'sourceOrderId', 'error', 'errors', 'earlier'] as const satisfies readonly (keyof RowResult)[];

const BATCH_ONLY = [
  'format',
  'delimiter',
  'journal',
  'lockWait',
  'retryUncertain',
  'validateOnly',
  'jsonl',
  'out',
  'concurrency',
  'rate',
  'key',
  'allowSimilar',
  'allowDuplicates',
  'waitForService',
] as const;

/** Registers `claims file`, a flag for each of the claim's fields. */
function registerFile(group: Command, deps: Deps, claimFields: readonly ClaimField[]): void {
  const cmd = group
    .command('file')
    .description('File one claim from flags, --data or prompts; or a batch from a CSV/JSONL/JSON file with --from')
    .option('--data <file|->', 'one claim as JSON (a file, or - for stdin); flags override its fields')
    .option('--from <file|->', 'file a batch: .csv, .jsonl or .json (- for stdin, with --format)')
    .option('--format <format>', 'input format for --from: csv, jsonl or json (default: from the extension)')
    .option('--delimiter <char>', "the CSV's separator: one character, or tab (default: comma, semicolon or tab, told from the header)")
    .option('--concurrency <n>', 'most requests in flight at once; fewer while the server refuses (batch, 1-64)', '16')
    .option('--rate <n/s>', 'most requests started per second, e.g. 40/s or 600/m (batch; default: as the server allows)')
    .option('--wait-for-service <duration>', 'when the service is down, wait up to this long for it (asking with a GET) instead of stopping, e.g. 10m (batch)')
    .option('--journal <path>', "the batch's name in the record of claims (default: <input>.journal.jsonl); a 0.2.0 journal there is read in once")
    .option('--lock-wait <duration>', 'how long to wait for another run filing for this store before refusing, e.g. 10m; 0s refuses at once (batch)', '5s')
    .option(
      '--retry-uncertain',
      'resend rows whose earlier answer was lost; one that exists is filed twice, so first look for them in the merchant dashboard (claims history shows when each was sent)',
    )
    .option('--key <column>', 'identify rows by your own id column (ticket, RMA); it need not be a claim field (not sent)')
    .option('--allow-similar', 'file rows that look like a claim filed earlier (same e-mail and item), which are held otherwise')
    .option('--allow-duplicates', 'file rows already filed for this store from another file or journal, or repeated in this file (held otherwise)')
    .option('--force', 'file one claim even when the record of claims shows it (or one for the same customer and item) filed already')
    .option('-y, --yes', 'file one claim without showing it for confirmation (scripts without a terminal are never asked)')
    .option('--validate-only', 'check every row of --from and send nothing')
    .option('--dry-run', 'print the request and send nothing (with --from: say what a run would do with each row, from the record of claims)')
    .option('--out <file.csv>', 'write the input rows with status, sourceOrderId and error columns (batch)')
    .option('--jsonl [fields]', 'one JSON result per row on stdout (batch); with fields (comma-separated), only those (docs/json.md)')
    .option('--json', 'print the created claim payload (batch: a JSON summary)');
  // The batch reader's formats, loaded only when `opcli completion` asks: building `file` loads no batch module.
  completeValues(cmd, { '--format': async () => (await import('../../claims/reader.js')).INPUT_FORMATS });
  for (const field of claimFields) {
    if (field.type === 'boolean') {
      cmd.addOption(new Option(`--${field.flag}`, describeField(field)));
      cmd.addOption(new Option(`--no-${field.flag}`, `${field.key} = false`).hideHelp());
    } else if (field.type === 'array') {
      cmd.addOption(new Option(`--${field.flag} <url>`, describeField(field)).argParser((v: string, prev: string[] = []) => [...prev, v]));
    } else {
      const option = new Option(`--${field.flag} <${field.type === 'number' ? 'number' : 'value'}>`, describeField(field));
      cmd.addOption(field.values ? completesWith(option, field.values) : option);
    }
  }
  cmd.addHelpText('after', FILE_HELP).action(async (flags: Record<string, unknown>, command: Command) => {
    const opts = fileOptions(flags, claimFields);
    checkCombination(opts, flags, command, claimFields);
    await run(opts, deps);
  });
}

/** The options of a run from the parsed flags (durations and rates read, field flags gathered). */
function fileOptions(flags: Record<string, unknown>, claimFields: readonly ClaimField[]): FileOptions {
  const fields: FieldFlags = {};
  for (const field of claimFields) {
    const attr = new Option(`--${field.flag}`).attributeName();
    const value = flags[attr];
    if (value !== undefined) fields[field.key] = value as string | string[] | boolean;
  }
  return {
    fields,
    data: flags.data as string | undefined,
    from: flags.from as string | undefined,
    format: flags.format as string | undefined,
    delimiter: flags.delimiter === undefined ? undefined : parseDelimiter(String(flags.delimiter)),
    concurrency: Number(flags.concurrency),
    rate: flags.rate === undefined ? undefined : parseRate(String(flags.rate), '--rate'),
    journal: flags.journal as string | undefined,
    lockWaitMs: parseDuration(String(flags.lockWait), '--lock-wait'),
    waitForServiceMs: flags.waitForService === undefined ? undefined : parseDuration(String(flags.waitForService), '--wait-for-service', { minMs: 1_000 }),
    retryUncertain: !!flags.retryUncertain,
    validateOnly: !!flags.validateOnly,
    dryRun: !!flags.dryRun,
    json: !!flags.json,
    jsonl: !!flags.jsonl,
    resultFields: jsonFields(flags.jsonl as string | boolean | undefined, '--jsonl', RESULT_FIELDS),
    out: flags.out as string | undefined,
    key: flags.key as string | undefined,
    allowSimilar: !!flags.allowSimilar,
    allowDuplicates: !!flags.allowDuplicates,
    force: !!flags.force,
    yes: !!flags.yes,
  };
}

/** `--delimiter`: one character (`;`, `|`), or `tab` (or `\t` as typed in a shell without $'\t'). */
function parseDelimiter(text: string): string {
  if (text === '') throw new UsageError('--delimiter needs a value; it was given empty.');
  const value = text.toLowerCase() === 'tab' || text === '\\t' ? '\t' : text;
  if ([...value].length !== 1 || value === '"' || value === '\n' || value === '\r') {
    throw new UsageError(
      `--delimiter must be one character (such as ';' or '|') or tab, got ${JSON.stringify(text)}.`,
      "For example: --delimiter ';' or --delimiter tab.",
    );
  }
  return value;
}

/** Flags that cannot go together (one claim's flags with --from, a batch's without it) are a usage error. */
function checkCombination(opts: FileOptions, flags: Record<string, unknown>, command: Command, claimFields: readonly ClaimField[]): void {
  for (const k of ['from', 'data', 'format', 'delimiter', 'journal', 'out', 'key'] as const) {
    if (command.getOptionValueSource(k) === 'cli' && String(flags[k]).trim() === '') throw new UsageError(`--${k} needs a value; it was given empty.`);
  }
  if (opts.from) {
    if (opts.data) throw new UsageError('--data (one claim) and --from (a batch) cannot be combined.');
    const given = Object.keys(opts.fields).map((k) => `--${claimFields.find((f) => f.key === k)?.flag}`);
    if (given.length) throw new UsageError(`Field flags (${given.join(', ')}) apply to one claim, not to --from.`, "Put the values in the file's columns.");
    if (opts.json && opts.jsonl) throw new UsageError('Pick one of --json and --jsonl.');
    if (opts.force)
      throw new UsageError(
        '--force applies to one claim.',
        'A batch files rows the record holds with --allow-duplicates (and look-alikes with --allow-similar).',
      );
  } else {
    const used = BATCH_ONLY.filter((k) => command.getOptionValueSource(k) === 'cli');
    if (used.length)
      throw new UsageError(`${used.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} only apply to a batch (--from FILE).`);
  }
}

export async function run(opts: FileOptions, deps: Deps): Promise<void> {
  if (opts.from) {
    if (opts.retryUncertain && !opts.dryRun && !opts.validateOnly) {
      deps.err(
        '--retry-uncertain: the rows whose earlier answer was lost are sent again, and any of them whose claim exists is filed a second time. Stop now (Ctrl-C) unless the merchant dashboard shows none of them.\n',
      );
    }
    const { runBatch } = await import('../../claims/batch.js');
    await runBatch({ ...opts, from: opts.from }, deps, batchView(deps, { json: opts.json, jsonl: opts.jsonl, fields: opts.resultFields }));
    return;
  }
  await fileOne(opts, deps);
}

// The help text of `claims file`: examples, how a batch knows its rows, exit codes.
/** The help line of a field flag: its path, type, and whether it is required. */
function describeField(field: ClaimField): string {
  const type =
    field.type === 'enum'
      ? `one of ${field.values?.join(', ')}`
      : field.type === 'array'
        ? 'URL, repeatable'
        : field.type === 'boolean'
          ? 'switch'
          : field.type;
  return `${field.key} (${type})${field.required ? ', required' : ''}${field.key === 'storeId' ? "; default: the profile's store-id" : ''}`;
}

const FILE_HELP = `
Examples:
  $ opcli claims file --customer-email alice@example.com --item-name Kettle --item-price 49.99 \\
      --warranty-date-of-purchase 2024-05-01T10:00:00Z --warranty-period P1Y \\
      --shipping-first-name Alice --shipping-last-name Example --shipping-address1 "1 Main St" \\
      --shipping-city Springfield --shipping-zip 62701 --shipping-country US --signature "" \\
      --sales-channel IN_STORE --claim-category WARRANTY --issue-type DEFECTIVE_ITEM --resolution RESHIP
  $ opcli claims file --data claim.json --resolution STORE_CREDIT     # flags override the file
  $ opcli claims file                                                 # on a terminal: asks for each field
  $ opcli claims template --csv > claims.csv                          # then fill it in a spreadsheet
  $ opcli claims file --from claims.csv --validate-only
  $ opcli claims file --from claims.csv --dry-run                     # what a run would send, refuse or hold
  $ opcli claims file --from claims.csv --concurrency 8 --out results.csv
  $ opcli claims file --from claims.csv --rate 40/s                    # when you know the server's budget
  $ opcli claims file --from claims.csv --retry-uncertain             # once the dashboard shows none of the uncertain rows
  $ opcli claims file --from claims.csv --key rma                     # rows known by your own id column
  $ opcli claims file --from export.csv --delimiter '|'               # a separator other than , ; or tab

A CSV may be UTF-8 or UTF-16 with its byte order mark (Windows PowerShell's \`>\` writes UTF-16); its
separator (comma, semicolon or tab) is told from the header, or given with --delimiter; in a
semicolon file a price may have a decimal comma (249,99). A date alone (2024-05-01) is sent as noon
UTC that day; a day/month form such as 05/01/2024 is refused (write 2024-01-05 or 2024-05-01).

A batch records every row in the record of claims before sending it, under the batch's name
(<input>.journal.jsonl, or --journal): a rerun asks it what each row became. A row is known by its content
(the parsed claim, in a form a spreadsheet re-save does not change, plus its count among identical
rows), or by --key: edit, sort or re-save the file and run the same command again; rows filed,
rejected or uncertain are not sent again, whatever their line. A new row that looks like a filed
one (same e-mail and item) is held (exit 3) until you pass --allow-similar. The record of claims
(one per store, shared by every file, journal and profile; with record-url, by the whole team in its
PostgreSQL database) holds a row filed from another file or a
copy, and the second copy of a row repeated in a file, until --allow-duplicates; one claim (--data,
flags, prompts) it holds is refused (exit 3) until --force; on a terminal one claim is shown and
confirmed first (--yes skips). A journal of 0.2.0 at the batch's name is read into the record once,
and counts only for the service and store its header names. --out is never written through a link,
nor when another user owns it or others can write it (exit 2).
Requests are paced to the server's limit as learnt from its 429s (and Retry-After or RateLimit-*
headers): --concurrency is the most in flight, --rate the most started per second. A 429 means
nothing was created, so that row is asked again; a row whose answer was lost is never resent.
Exit codes: 0 every row filed (now or earlier), 1 server down or the record/--out not writable,
2 unusable file, journal or flags, an unsafe journal, lock or --out, or two of --from/--journal/--out are one file (nothing sent),
3 some rows invalid, rejected, held, uncertain or not sent, or the CSV breaks part-way after rows
were sent; one claim the record of claims holds already (or a similar one: --force), or another run
filing for the store, 4 log in needed, 1 also when the claim is not confirmed, 130 interrupted.`;

// `claims file` without --from: asks for what is missing on a terminal, files one claim, shows it.
/** Files one claim and prints its sourceOrderId (--json: the whole payload); a dry run prints the request. */
async function fileOne(opts: FileOptions, deps: Deps): Promise<void> {
  // CHOICE (docs/spec-choices.md#confirming-a-claim): on a terminal the claim is shown and confirmed (default No); --yes skips it, and no script is asked.
  const confirm = deps.canPrompt() && !opts.yes ? (claim: OfflineClaim) => confirmClaim(claim, deps) : undefined;
  const { fileSingle } = await import('../../claims/single.js');
  const result = await fileSingle(
    { fields: opts.fields, data: opts.data, dryRun: opts.dryRun, force: opts.force, confirm },
    deps,
    deps.canPrompt() ? askField(deps) : undefined,
  );
  if (result.kind === 'dry-run') {
    if (opts.json) printJson(deps, { method: 'POST', url: result.url, body: result.body });
    else deps.out(`POST ${result.url}\ncontent-type: application/json\n\n${JSON.stringify(result.body, null, 2)}\n`);
    deps.err('Dry run: nothing was sent.\n');
    return;
  }
  if (opts.json) printJson(deps, result.payload);
  else {
    deps.out(`${result.payload.sourceOrderId}\n`);
    deps.err(`Filed the claim; order ${result.payload.sourceOrderId} was created for it.\n`);
  }
}

/** Shows the claim about to be filed on stderr and asks to file it (default No). */
async function confirmClaim(claim: OfflineClaim, deps: Deps): Promise<boolean> {
  const { flattenClaim } = await import('../../claims/fields.js');
  deps.err(`The claim to file:\n${alignedLines(Object.entries(flattenClaim(claim)))}\n`);
  return (await deps.prompter()).confirm({
    message: `File this claim for ${safeLine(claim.customer.email)} in store ${safeLine(claim.storeId)}?`,
    default: false,
  });
}

/** Puts a field's question to the terminal's prompter (loaded when the first question comes): a select list for a choice, else a line of text. */
function askField(deps: Deps): AskField {
  return async (question) => ('choices' in question ? (await deps.prompter()).select(question) : (await deps.prompter()).input(question));
}

// How `claims file --from` shows a batch on this terminal: per-row results in input order (--jsonl,
// --out), the status line, rows not filed, and the summary.
/** The display's modes: `--json` (a summary object on stdout, no status line) or `--jsonl` (a line per row, the summary last). */
interface ViewModes {
  json: boolean;
  jsonl: boolean;
  /** `--jsonl FIELDS`: the fields of each row's result line. */
  fields?: string[];
}

/** The batch's view over the command's streams. */
export function batchView(deps: Deps, modes: ViewModes): BatchView {
  return {
    report: (source, options, progress) => new BatchReporter(deps, source, { ...options, ...modes }, progress),
    summarize: (summary) => summarize(summary, deps, modes),
    notice: (text) => deps.err(text),
  };
}

/** The report's options: where rows go and the verb (the batch's), and the display's modes. */
type ReportOptions = Parameters<BatchView['report']>[1] & ViewModes;

class BatchReporter implements BatchReport {
  private readonly order = new InOrder<{ row: SourceRow; result: RowResult }>((item) => this.emit(item.row, item.result));
  private readonly out?: ResultsFile;
  private readonly ticker?: StatusTicker;
  /** Rows whose line repeats an earlier row's cause (same outcome, same error): folded into one line at the end. */
  private readonly folded = new Map<string, { status: string; error: string; lines: number[]; count: number; first?: RowResult }>();

  constructor(
    private readonly deps: Deps,
    private readonly source: RowSource,
    private readonly options: ReportOptions,
    progress: () => BatchProgress,
  ) {
    if (options.out) this.out = new ResultsFile(options.out, source.header, source.delimiter);
    // --progress: a redrawn line on a terminal (not under --json), plain sentences in a log, or none.
    const style = progressStyle(deps);
    if (style === 'plain' || (style === 'line' && !options.json)) {
      this.ticker = new StatusTicker(deps, () => ({ ...progress(), verb: options.verb, now: deps.now() }));
    }
  }

  get drawsProgress(): boolean {
    return this.ticker !== undefined;
  }

  async start(): Promise<void> {
    await this.out?.open();
    this.ticker?.start();
  }

  /** Undefined while there is room for more rows; else a promise that resolves when there is. */
  room(): Promise<void> | undefined {
    return this.order.room();
  }

  /** Reports a row; its output is released in input order (a promise only then). */
  add(row: SourceRow, result: RowResult): Promise<void> | undefined {
    this.ticker?.tick();
    if (result.status !== 'filed' && result.status !== 'valid' && !result.earlier && !this.options.jsonl) this.problem(result);
    // Results printed per row (--jsonl or --out) are written in input order.
    return this.options.jsonl || this.out ? this.order.done(row.seq, { row, result }) : undefined;
  }

  /**
   * A row not filed, on stderr: the first of each cause in full, the others counted (an outage
   * fails hundreds alike). Rows not sent are shown at the end, so a service never reached is one
   * line instead (finish).
   */
  private problem(result: RowResult): void {
    const cause = result.status === 'held' ? result.cause : result.errors?.length ? undefined : (result.error ?? '');
    const key = cause === undefined ? undefined : `${result.status}\n${cause}`;
    const same = key === undefined ? undefined : this.folded.get(key);
    if (same) {
      same.count++;
      keepFirstLines(same.lines, result.line);
      return;
    }
    const later = key !== undefined && result.status === 'not_sent';
    if (key !== undefined) this.folded.set(key, { status: result.status, error: cause ?? '', lines: [], count: 0, first: later ? result : undefined });
    if (!later) this.notice(problemText(result, this.source.unit, this.options.verb === 'plan'));
  }

  private async emit(row: SourceRow, result: RowResult): Promise<void> {
    // The display's fold cause is not part of a row's result line (JSON leaves an undefined out).
    if (this.options.jsonl) {
      await writeWithBackpressure(this.deps.io.stdout, `${JSON.stringify(pickFields({ ...result, cause: undefined }, this.options.fields))}\n`);
    }
    await this.out?.row(row, result);
  }

  /** A line for the person on stderr, above the status line. */
  notice(text: string): void {
    if (this.ticker) this.ticker.notice(text);
    else this.deps.err(text);
  }

  /** Prints the folded causes, stops the status line and closes the results file; `unreachable`: rows not sent left to one line. */
  async finish(options: { unreachable?: boolean } = {}): Promise<void> {
    for (const { status, error, lines, count, first } of this.folded.values()) {
      if (first && options.unreachable) continue;
      if (first) this.notice(problemText(first, this.source.unit, this.options.verb === 'plan'));
      if (count === 0) continue;
      const unit = this.source.unit;
      const more = count > lines.length ? ` and ${formatCount(count - lines.length)} more` : '';
      this.notice(
        `${formatCount(count)} more ${unit}${count === 1 ? '' : 's'} ${status.replace('_', ' ')} for the same cause (${safeLine(error)}): ${unit}${count === 1 ? '' : 's'} ${lines.join(', ')}${more}\n`,
      );
    }
    this.folded.clear();
    this.ticker?.stop();
    await this.order.flush();
    await this.out?.close();
  }
}

/** The lines a folded cause lists: the FOLDED_LINES smallest, in line order, however the rows finished. */
const FOLDED_LINES = 20;

function keepFirstLines(lines: number[], line: number): void {
  if (lines.length === FOLDED_LINES && line > (lines.at(-1) as number)) return;
  let at = lines.length;
  while (at > 0 && (lines[at - 1] as number) > line) at--;
  lines.splice(at, 0, line);
  if (lines.length > FOLDED_LINES) lines.pop();
}

// Keeps per-row output in input order; when MAX_WAITING rows wait (one slow request), no new row is read, so memory stays flat.
export const MAX_WAITING = 1_000;

class InOrder<T> {
  private readonly waiting = new Map<number, T>();
  private nextSeq = 0;
  /** The drain under way, if one is. */
  private draining: Promise<void> | undefined;
  /** Readers waiting for `waiting` to shrink below MAX_WAITING. */
  private roomWaiters: (() => void)[] = [];

  constructor(private readonly emit: (item: T) => Promise<void>) {}

  /** Undefined while there is room for more rows; else a promise that resolves once fewer than MAX_WAITING rows wait. */
  room(): Promise<void> | undefined {
    if (this.waiting.size < MAX_WAITING) return undefined;
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Row `seq` is done: it goes out now if every earlier row has, else when they have. */
  async done(seq: number, item: T): Promise<void> {
    this.waiting.set(seq, item);
    // One drain at a time: a second one would write its rows while the first awaits a write.
    if (this.draining) return;
    this.draining = this.drain();
    try {
      await this.draining;
    } finally {
      this.draining = undefined;
    }
    if (this.roomWaiters.length && this.waiting.size < MAX_WAITING) for (const resolve of this.roomWaiters.splice(0)) resolve();
  }

  private async drain(): Promise<void> {
    for (let next = this.waiting.get(this.nextSeq); next !== undefined; next = this.waiting.get(this.nextSeq)) {
      this.waiting.delete(this.nextSeq);
      this.nextSeq++;
      await this.emit(next);
    }
  }

  /** The end: anything still waiting goes out in order, once a drain under way has ended (else its rows went out twice). */
  async flush(): Promise<void> {
    await this.draining?.catch(() => {});
    for (const seq of [...this.waiting.keys()].sort((a, b) => a - b)) {
      const item = this.waiting.get(seq) as T;
      this.waiting.delete(seq);
      await this.emit(item);
    }
    for (const resolve of this.roomWaiters.splice(0)) resolve();
  }
}

// Per-row results (--jsonl, --out): a slow reader holds the batch back; a stream that fails (a full disk) stops it, losing no row.
/** Waits until a stream has room again; a stream that failed rejects instead of never draining. */
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

/** The results CSV of --out. */
class ResultsFile {
  private out?: WriteStream;
  /** The claim's fields and csv-stringify, loaded by open(): a verb that writes no results file loads neither. */
  private fields?: typeof import('../../claims/fields.js');
  private stringify?: typeof import('csv-stringify/sync').stringify;

  constructor(
    private readonly path: string,
    private readonly header: string[] | undefined,
    /** The input CSV's separator: the results open in the spreadsheet the input came from. */
    private readonly delimiter = ',',
  ) {}

  /** Creates the file (0600: customers' personal data) or empties one of yours (batch-files.ts), and writes its header. */
  async open(): Promise<void> {
    this.fields = await import('../../claims/fields.js');
    this.stringify = (await import('csv-stringify/sync')).stringify;
    const { handle } = await openBatchFile(this.path, RESULTS_ROLE, 'truncate');
    const out = createWriteStream('', { fd: handle, encoding: 'utf8' });
    this.out = out;
    // A write error is read from `errored` by the next write, which stops the batch.
    out.on('error', () => {});
    await this.write([...(this.header ?? this.fields.CLAIM_FIELDS.map((f) => f.key)), 'status', 'sourceOrderId', 'error']);
  }

  /** The row's cells as read (or its fields, for JSON input) with its outcome. */
  async row(row: SourceRow, result: RowResult): Promise<void> {
    const cells =
      row.cells ??
      (() => {
        const { CLAIM_FIELDS, flattenClaim } = this.fields as NonNullable<typeof this.fields>;
        const flat = flattenClaim(row.value);
        return CLAIM_FIELDS.map((f) => flat[f.key] ?? '');
      })();
    const error = result.error ?? result.errors?.map((e) => `${e.path || '(row)'}: ${e.message}`).join('; ') ?? '';
    await this.write([...cells, result.status, result.sourceOrderId ?? '', error]);
  }

  private async write(cells: string[]): Promise<void> {
    if (!this.out || !this.stringify) return;
    try {
      await writeWithBackpressure(this.out, this.stringify([cells], { delimiter: this.delimiter }));
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

/** A row not filed, for stderr: its line, fields and expectations, text made safe; `dryRun`: what a real run would do with it. */
function problemText(result: RowResult, unit: 'line' | 'item', dryRun = false): string {
  const where = `${unit} ${result.line}`;
  if (result.status === 'held') return `${where}: ${dryRun ? 'would be held: ' : ''}${safeLine(result.error ?? '')}\n`;
  if (result.errors?.length) {
    const invalid = dryRun ? `${where}: would be refused: invalid, not sent` : `${where}: invalid, not sent`;
    const head = result.status === 'invalid' ? invalid : `${where}: ${result.status}: ${safeLine(result.error ?? '')}`;
    return `${head}\n${result.errors.map((e) => `  ${safeLine(e.path || '(row)')}: ${safeLine(e.message)}`).join('\n')}\n`;
  }
  return `${where}: ${result.status.replace('_', ' ')}: ${safeLine(result.error ?? '')}\n`;
}

// The status line of a batch: formatted when drawn, never per row.
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
interface StatusState extends BatchProgress {
  verb: 'send' | 'validate' | 'plan';
  now: number;
}

/** The status line, fitted to the terminal (a wrapped line cannot be redrawn): zero counts dropped first, then the limiter's, then ETA. */
function statusLine(s: StatusState, width: number): string {
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

/** The status line on stderr, drawn by src/text/progress.ts in the run's style (a line redrawn every 200 ms, or plain sentences). */
class StatusTicker {
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

/** Prints a batch's summary on stderr, and with --json (one object) or --jsonl (the last line, `{"summary": {…}}`) on stdout. */
export function summarize(summary: BatchSummary, deps: Deps, opts: { json: boolean; jsonl?: boolean }): void {
  const { counts: c, limits, inFlight, journal: journalPath } = summary;
  const earlierUncertain = summary.earlierUncertain.lines;
  const earlierUncertainCount = summary.earlierUncertain.count;
  const seconds = summary.elapsedMs / 1000;
  // Rows and requests differ: a row refused with 429 is asked again (one row, several requests).
  const requests = limits?.answered ?? c.sent;
  const refused = limits?.refused ?? 0;
  // The rate the server allows as learnt (or --rate): what the limiter paced at when the batch ended.
  const learnt = limits?.learnt !== undefined ? Math.round(limits.learnt * 10) / 10 : null;
  if (opts.json || opts.jsonl) {
    const summary = {
      rows: c.done,
      filed: c.filed,
      rejected: c.rejected,
      invalid: c.invalid,
      held: c.held,
      uncertain: c.uncertain + inFlight.length,
      notSent: c.notSent,
      earlier: { filed: c.filedEarlier, rejected: c.rejectedEarlier, uncertain: c.uncertainEarlier },
      sent: c.sent,
      requests,
      rateLimited: refused,
      learntRate: learnt,
      seconds: Math.round(seconds * 1000) / 1000,
      rowsPerSecond: seconds > 0 ? Math.round((c.done / seconds) * 10) / 10 : 0,
      journal: journalPath,
    };
    deps.out(opts.jsonl ? `${JSON.stringify({ summary })}\n` : `${JSON.stringify(summary, null, 2)}\n`);
  }
  const rate = seconds > 0 ? c.done / seconds : 0;
  const pace = learnt !== null ? `; paced at ${learnt >= 10 ? Math.round(learnt) : learnt}/s, the rate the server allows as learnt` : '';
  const traffic = `${counted(requests, 'request')}${refused ? `, ${count(refused)} of them answered 429 or 503 (over the server's limit)` : ''}${pace}`;
  const lines = [
    `Filed ${counted(c.filed, 'claim')}; ${count(c.rejected)} rejected by the API, ${count(c.invalid)} invalid (not sent), ${count(c.uncertain + inFlight.length)} uncertain${c.held ? `, ${count(c.held)} held (not sent)` : ''}${c.notSent ? `, ${count(c.notSent)} not sent` : ''} (${c.done === 0 ? 'no rows' : counted(c.done, 'row')} in ${seconds.toFixed(1)}s, ${rate.toFixed(0)} rows/s; ${traffic}).`,
  ];
  if (c.filedEarlier + c.rejectedEarlier + c.uncertainEarlier > 0) {
    lines.push(
      `Settled by an earlier run, not sent again: ${count(c.filedEarlier)} filed, ${count(c.rejectedEarlier)} rejected, ${count(c.uncertainEarlier)} uncertain.`,
    );
  }
  if (earlierUncertainCount > 0) {
    lines.push(
      `Uncertain from an earlier run (sent, answer never read): ${summary.unit}${earlierUncertainCount === 1 ? '' : 's'} ${earlierUncertain.join(', ')}${earlierUncertainCount > earlierUncertain.length ? ` and ${count(earlierUncertainCount - earlierUncertain.length)} more` : ''}.`,
    );
  }
  if (inFlight.length)
    lines.push(`Uncertain (in flight when stopped; the claims may exist): ${summary.unit}${inFlight.length === 1 ? '' : 's'} ${inFlight.join(', ')}.`);
  if (c.uncertain + c.uncertainEarlier + inFlight.length > 0) {
    lines.push(
      `Uncertain means the request was sent but its answer was lost: the claim may exist, and opcli does not resend it on its own. ${CHECK_UNCERTAIN_ROWS}`,
    );
  }
  lines.push(`Journal: ${journalPath}`);
  deps.err(`${lines.join('\n')}\n`);
}
