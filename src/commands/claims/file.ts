import { type Command, Option } from 'commander';
import { type BatchOptions, runBatch } from '../../claims/batch.js';
import type { RowResult } from '../../claims/results.js';
import { INPUT_FORMATS } from '../../claims/row-source.js';
import { CLAIM_FIELDS } from '../../claims/fields.js';
import type { FieldFlags } from '../../claims/single.js';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { parseDuration, parseRate } from '../../core/flags.js';
import { jsonFields } from '../../core/json-fields.js';
import { completesWith, completeValues } from '../../core/flags.js';
import { batchView } from './batch-view.js';
import { describeField, FILE_HELP } from './file-help.js';
import { fileOne } from './file-single.js';

/** Options of `claims file`: one claim (fields, --data) or a batch (--from, the batch's own options). */
export interface FileOptions extends Omit<BatchOptions, 'from'> {
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
export const RESULT_FIELDS = ['line', 'status', 'sourceOrderId', 'error', 'errors', 'earlier'] as const satisfies readonly (keyof RowResult)[];

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

/** Registers `claims file`. */
export function register(group: Command, deps: Deps): void {
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
  // The batch reader's formats, loaded only when `opcli completion` asks (see run() for why).
  completeValues(cmd, { '--format': async () => INPUT_FORMATS });
  for (const field of CLAIM_FIELDS) {
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
    const opts = fileOptions(flags);
    checkCombination(opts, flags, command);
    await run(opts, deps);
  });
}

/** The options of a run from the parsed flags (durations and rates read, field flags gathered). */
function fileOptions(flags: Record<string, unknown>): FileOptions {
  const fields: FieldFlags = {};
  for (const field of CLAIM_FIELDS) {
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
function checkCombination(opts: FileOptions, flags: Record<string, unknown>, command: Command): void {
  for (const k of ['from', 'data', 'format', 'delimiter', 'journal', 'out', 'key'] as const) {
    if (command.getOptionValueSource(k) === 'cli' && String(flags[k]).trim() === '') throw new UsageError(`--${k} needs a value; it was given empty.`);
  }
  if (opts.from) {
    if (opts.data) throw new UsageError('--data (one claim) and --from (a batch) cannot be combined.');
    const given = Object.keys(opts.fields).map((k) => `--${CLAIM_FIELDS.find((f) => f.key === k)?.flag}`);
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

/** Files one claim or a batch. */
export async function run(opts: FileOptions, deps: Deps): Promise<void> {
  if (opts.from) {
    const { fields: _fields, data: _data, force: _force, yes: _yes, json: _json, jsonl: _jsonl, resultFields, ...batch } = opts;
    if (opts.retryUncertain && !opts.dryRun && !opts.validateOnly) {
      deps.err(
        '--retry-uncertain: the rows whose earlier answer was lost are sent again, and any of them whose claim exists is filed a second time. Stop now (Ctrl-C) unless the merchant dashboard shows none of them.\n',
      );
    }
    await runBatch({ ...batch, from: opts.from }, deps, batchView(deps, { json: opts.json, jsonl: opts.jsonl, fields: resultFields }));
    return;
  }
  await fileOne({ fields: opts.fields, data: opts.data, dryRun: opts.dryRun, json: opts.json, force: !!opts.force, yes: !!opts.yes }, deps);
}
