import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { OpcliError } from '../../core/errors.js';
import { type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import * as history from '../../giftcard/history.js';
import type { HistoryRow } from '../../giftcard/history.js';
import { CREDIT_FIELDS } from '../../giftcard/issuance.js';
import { orderLabel } from '../../core/identity.js';
import { checkText } from '../../core/flags.js';
import { safeLine, safeText } from '../../text/safe.js';
import type * as ledgerMod from '../../giftcard/ledger.js';
import { osUser } from '../../config/user-name.js';
import { openLedger } from '../../giftcard/ledger-db.js';
import { DEFAULT_CURRENCY, groupAmount } from '../../giftcard/money.js';
import { providerClient } from '../../giftcard/provider.js';
import * as output from '../../core/output.js';
import { colors, terminalWidth } from '../../core/output.js';
import { wrapText } from '../../text/wrap.js';

interface HistoryOptions {
  claim?: string;
  order?: string;
  json: boolean;
  /** `--json FIELDS`: only these fields of each issuance. */
  fields?: string[];
  verify: boolean;
  utc: boolean;
}

export function register(group: Command, deps: Deps): void {
  group
    .command('history')
    .description('Show the ledger of store credit issuances; --verify re-reads balances to find late double credits')
    .option('--claim <id>', 'only this claim')
    .option('--order <number>', 'only this order number')
    .option('--verify', 're-read the loyalty cards of issuances that fell back from the trigger, and flag late trigger credits')
    .option('--utc', 'show times in UTC (default: local time)')
    .option('--json [fields]', 'print JSON (times in ISO 8601 UTC); with fields (comma-separated), only those of each issuance (docs/json.md)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard history
  $ opcli giftcard history --claim C-1001 --json
  $ opcli giftcard history --json claimId,amount,currency,status
  $ opcli giftcard history --verify

The ledger is shared by every profile of this config folder, and with record-url by every member of
the team's record in PostgreSQL (docs/guides/team-record.md): an issuance is known by the provider's
shop, the service's store and the claim (or order) however its id is written, and each entry names
the profile that issued it. --claim C-1001 lists c-1001 and C‐1001 too.
On a terminal each issuance is a wrapped block (the status and amount never cut); a pipe gets one
tab-separated line each.
Exit codes: 0, or 3 when --verify finds a possible double credit (a late trigger credit, or a claim
or order paid more than once: check those cards).`,
    )
    .action(async (flags: { claim?: string; order?: string; json?: JsonFlag; verify?: boolean; utc?: boolean }) => {
      checkFilter('--claim', flags.claim);
      checkFilter('--order', flags.order);
      const fields = jsonFields(flags.json, '--json', HISTORY_FIELDS);
      await run({ claim: flags.claim, order: flags.order, json: !!flags.json, fields, verify: !!flags.verify, utc: !!flags.utc }, deps);
    });
}

/** The fields of an issuance in `--json` (docs/json.md), in the order they are printed. */
const HISTORY_FIELDS: readonly (keyof HistoryRow)[] = [
  'at',
  ...CREDIT_FIELDS,
  'email',
  'name',
  'customerId',
  'status',
  'path',
  'cardId',
  'balance',
  'possibleDoubleCredit',
  'duplicateOf',
  'user',
  'profile',
  'shopUrl',
  'forced',
  'error',
  'warnings',
];

/** A filter no one typed on purpose would answer "no issuances" and hide the ones that exist. */
function checkFilter(flag: string, value: string | undefined): void {
  const what = flag === '--claim' ? 'claim id, e.g. --claim C-1001' : 'order number, e.g. --order 1001';
  checkText(flag, value, `Pass the ${what}, or leave ${flag} out to see every issuance.`);
}

/** Prints the ledger's issuances (filtered), and with --verify checks them for late trigger credits first. */
export async function run(opts: HistoryOptions, deps: Deps): Promise<void> {
  const ledger = await openLedger(deps.configDir(), await deps.profile(), { env: deps.env, cwd: deps.cwd });
  let verify: Verified | undefined;
  try {
    if (opts.verify) {
      const { client, settings } = await providerClient(deps);
      const currency = settings.currency ?? DEFAULT_CURRENCY;
      const verified = await history.verifyStreamed(
        ledger,
        { claim: opts.claim, order: opts.order },
        { client, now: deps.now, user: osUser(), currency, warn: (message) => deps.err(`WARNING: ${safeText(message)}\n`) },
      );
      verify = { verified, currency };
    }
    await streamRows(opts, deps, ledger, verify);
  } finally {
    await ledger.close();
  }
  const doubles = verify?.verified.filter((v) => v.result === 'possible-double-credit') ?? [];
  if (verify && !opts.json) {
    deps.err(
      `Verified ${verify.verified.length} issuance(s) (claims or orders paid more than once, and credits that fell back from the trigger): ${doubles.length} possible double credit(s).\n`,
    );
    for (const v of verify.verified) if (v.result === 'error') deps.err(`Could not check ${safeLine(v.key)}: ${safeText(v.message)}\n`);
  }
  if (doubles.length) {
    throw new OpcliError(`${doubles.length} issuance(s) show a possible double credit: the customer may have been paid twice.`, {
      exitCode: 3,
      hint: 'Check those cards at the provider and take back the extra credit where the customer was paid twice.',
    });
  }
}

/** What --verify found, and the currency of amounts recorded without one. */
interface Verified {
  verified: history.VerifyResult[];
  currency: string;
}

/** How many rows a pipe is written at a time. */
const PIPE_ROWS = 1000;

/**
 * The rows as the ledger is read: --json item by item and a pipe's lines a page at a time (a year's
 * ledger is never held whole); a terminal's blocks are aligned on all rows, so they are gathered first.
 */
async function streamRows(opts: HistoryOptions, deps: Deps, ledger: ledgerMod.CreditLedger, verify?: Verified): Promise<void> {
  const env = { notice: (message: string) => deps.err(`Warning: ${safeText(message)}\n`), currency: verify?.currency };
  const filter = { claim: opts.claim, order: opts.order };
  if (opts.json) {
    const json = new output.JsonArrayWriter(deps, { ledger: ledger.path }, 'issuances');
    await history.streamHistory(ledger, filter, env, (row) => json.item(pickFields(row, opts.fields)));
    json.end(verify ? { verify: verify.verified } : {});
    return;
  }
  const terminal = output.outputMode(deps, {}) === 'table';
  let rows: HistoryRow[] = [];
  let count = 0;
  // The batch is taken before printing: the plain table is written before printTable's first await, in order.
  const flush = (): Promise<void> => {
    const batch = rows;
    rows = [];
    return batch.length ? output.printTable(deps, plainColumns(opts.utc), batch, 'plain') : Promise.resolve();
  };
  const pending: Promise<void>[] = [];
  await history.streamHistory(ledger, filter, env, (row) => {
    count++;
    rows.push(row);
    if (!terminal && rows.length >= PIPE_ROWS) pending.push(flush());
  });
  await Promise.all(pending);
  if (count === 0) deps.err(`No issuances recorded${opts.claim || opts.order ? ' for this filter' : ''} (${ledger.path}).\n`);
  else if (terminal) deps.out(await terminalBlocks(deps, rows, opts.utc));
  else await flush();
}

/** A pipe's columns, tab-separated, in this order. */
function plainColumns(utc: boolean): output.Column<HistoryRow>[] {
  return [
    { header: 'TIME', value: (r) => formatTime(r.at, utc) },
    { header: 'FOR', value: (r) => (r.bonus ? `bonus order ${orderLabel(r.orderNumber)}` : `claim ${r.claimId}`) },
    { header: 'AMOUNT', value: (r) => `${groupAmount(r.amount)} ${r.currency}` },
    { header: 'E-MAIL', value: (r) => r.email },
    { header: 'STATUS', value: (r) => (r.possibleDoubleCredit ? `${r.status}, POSSIBLE DOUBLE CREDIT` : r.status) },
    { header: 'PATH', value: (r) => r.path ?? '' },
    { header: 'CARD', value: (r) => r.cardId ?? '' },
    { header: 'PROFILE', value: (r) => r.profile },
    { header: 'USER', value: (r) => r.user },
  ];
}

/** A terminal's view: a block per issuance, wrapped, never cut: status, amount and a possible double credit are never lost at 80 columns. */
async function terminalBlocks(deps: Deps, rows: HistoryRow[], utc: boolean): Promise<string> {
  const chalk = await colors(deps);
  const width = terminalWidth(deps);
  const money = (r: HistoryRow) => `${groupAmount(r.amount)} ${r.currency}`;
  const statusWidth = Math.max(...rows.map((r) => r.status.length));
  const amountWidth = Math.max(...rows.map((r) => money(r).length));
  const blocks = rows.map((r) => {
    const what = r.bonus ? `bonus for order ${orderLabel(r.orderNumber)}` : `claim ${r.claimId}, order ${orderLabel(r.orderNumber)}`;
    const first = `${formatTime(r.at, utc)}  ${r.status.padEnd(statusWidth)}  ${money(r).padStart(amountWidth)}  ${safeLine(what)}`;
    const card = r.cardId ? `card ${r.cardId}${r.path ? ` (${r.path})` : ''}` : r.path ? `via ${r.path}` : 'no card';
    const second = `    ${safeLine(r.email)} · ${safeLine(card)} · profile ${safeLine(r.profile)} · user ${safeLine(r.user)}${r.forced ? ' · forced' : ''}`;
    const lines = [wrapText(first, width - 4, { hard: true }).replace(/\n/g, '\n    '), wrapText(second, width, { hard: true })];
    if (r.possibleDoubleCredit) {
      const why = r.duplicateOf ? `this claim or order was paid before (issuance ${r.duplicateOf})` : 'the trigger may have paid as well';
      lines.push(chalk.bold.red(wrapText(`    POSSIBLE DOUBLE CREDIT: ${why}`, width, { hard: true })));
    }
    if (r.error) lines.push(wrapText(`    ${safeLine(r.error)}`, width, { hard: true }));
    return lines.join('\n');
  });
  return `${blocks.join('\n\n')}\n`;
}

/** An ISO time as a person reads it: local with its offset, or UTC. */
function formatTime(iso: string, utc: boolean): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, '0');
  if (utc)
    return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC`;
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = `${sign}${p(Math.floor(Math.abs(offset) / 60))}:${p(Math.abs(offset) % 60)}`;
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${zone}`;
}
