import type { Command } from 'commander';
import { type ClaimEntry, type ClaimEvent, openClaimsHistory } from '../../claims/history.js';
import { serviceOrigin } from '../../claims/journal.js';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import * as output from '../../core/output.js';
import { EmailAddress } from '../../schemas.js';
import { checkText } from '../../core/flags.js';
import { safeLine } from '../../text/safe.js';
import { wrapText } from '../../text/wrap.js';

interface ClaimsHistoryOptions {
  order?: string;
  email?: string;
  since?: number;
  json: boolean;
  /** `--json FIELDS`: only these fields of each claim. */
  fields?: string[];
}

/** The fields of a claim in `--json` (docs/json.md), in the order they are printed: its latest attempt's, then every attempt. */
const CLAIM_HISTORY_FIELDS: readonly (keyof ClaimEntry)[] = [
  'at',
  'status',
  'sourceOrderId',
  'email',
  'item',
  'profile',
  'user',
  'host',
  'source',
  'line',
  'forced',
  'error',
  'events',
];

export function register(group: Command, deps: Deps): void {
  group
    .command('history')
    .description('List the claims filed for this store from the record of claims (every profile, file and journal)')
    .option('--order <sourceOrderId>', 'only the claim whose order (sourceOrderId) this is')
    .option('--email <address>', "only this customer's claims")
    .option('--since <date>', 'only claims filed at or after this date (2026-11-01, or an ISO date-time)')
    .option('--json [fields]', 'print JSON; with fields (comma-separated), only those of each claim (docs/json.md)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli claims history
  $ opcli claims history --email alice@example.com --since 2026-11-01
  $ opcli claims history --order SO-1042 --json
  $ opcli claims history --json sourceOrderId,status,at

The record of claims holds every claim opcli filed for this store (the API's origin and store id), from
every profile, input file and journal of this config folder, of the shared record-dir, or of the team's
PostgreSQL database (record-url: every member's claims). Each claim is
listed once with its latest state; its attempts (a row not sent by one run and filed by the next) are
its events (--json: "events"). A claim whose request left but whose answer was never recorded is
"uncertain": it may exist; look for it in the merchant dashboard, since the API cannot look a claim up.
On a terminal each claim is a block, never cut; a pipe gets one tab-separated line each.
Exit codes: 0; 2 a flag value that cannot be used.`,
    )
    .action(async (flags: { order?: string; email?: string; since?: string; json?: JsonFlag }) => {
      const fields = jsonFields(flags.json, '--json', CLAIM_HISTORY_FIELDS);
      for (const [flag, value] of [
        ['--order', flags.order],
        ['--email', flags.email],
        ['--since', flags.since],
      ] as const)
        checkText(flag, value, `Leave ${flag} out to see every claim.`);
      if (flags.email !== undefined && !EmailAddress.safeParse(flags.email.trim()).success) {
        throw new UsageError(`--email "${flags.email}" is not an e-mail address.`, "Pass the customer's address, such as --email alice@example.com.");
      }
      let since: number | undefined;
      if (flags.since !== undefined) {
        since = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(flags.since.trim()) ? `${flags.since.trim()}T00:00:00Z` : flags.since.trim());
        if (!Number.isFinite(since)) throw new UsageError(`--since "${flags.since}" is not a date.`, 'Pass a date such as 2026-11-01, or an ISO date-time.');
      }
      await run({ order: flags.order, email: flags.email, since, json: !!flags.json, fields }, deps);
    });
}

/**
 * What an empty history adds: opcli 0.2.0 kept a batch's claims only in the journal beside its input
 * file, which no setting names (test/fixtures/0.2.0/README.md), so no command can find them on its own.
 */
const OLD_JOURNALS =
  'Batches filed by opcli 0.2.0 are kept only in the journal beside each input file (FILE.journal.jsonl): `opcli record import FILE.journal.jsonl` reads one into this record, sending nothing.';

/** Prints the claims the record holds for the profile's store, each as it is read (a record of millions streams). */
export async function run(opts: ClaimsHistoryOptions, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  const store = { origin: serviceOrigin(profile.baseUrl), storeId: profile.storeId ?? null };
  const history = await openClaimsHistory(deps.configDir(), profile, { env: deps.env, cwd: deps.cwd }, store);
  try {
    const { path } = history;
    for (const d of history.damaged) deps.err(`Warning: the record of claims ${path}: ${d}; \`opcli claims repair\` sets it aside.\n`);
    const filter = { order: opts.order, email: opts.email, since: opts.since };
    const filtered = opts.order !== undefined || opts.email !== undefined || opts.since !== undefined;
    let count = 0;
    if (opts.json) {
      const json = new output.JsonArrayWriter(deps, { record: path }, 'claims');
      await history.each(filter, (c) => {
        count++;
        json.item(pickFields(c, opts.fields));
      });
      json.end();
    } else {
      const print = printer(deps);
      await history.each(filter, (c) => print(c, count++ === 0));
      print.end();
      if (count === 0) deps.err(`No claims recorded${filtered ? ' for this filter' : ''} (${path}).\n`);
    }
    if (count === 0 && !filtered) deps.err(`${OLD_JOURNALS}\n`);
  } finally {
    await history.close();
  }
}

/** How each claim is printed: a tab-separated line to a pipe, a wrapped block on a terminal (blocks apart by a blank line). */
function printer(deps: Deps): ((r: ClaimEntry, first: boolean) => void) & { end: () => void } {
  const out = new output.OutBuffer(deps);
  const from = (r: ClaimEvent) => `${r.source}${r.line ? ` line ${r.line}` : ''}`;
  const pipe = output.outputMode(deps, {}) !== 'table';
  const width = pipe ? 0 : output.terminalWidth(deps);
  const print = (r: ClaimEntry, first: boolean): void => {
    if (pipe) {
      out.write(
        `${[r.at, r.status, r.sourceOrderId ?? '', r.email ?? '', r.item ?? '', r.profile, r.user, from(r)].map((v) => safeLine(v).replace(/\t/g, ' ')).join('\t')}\n`,
      );
      return;
    }
    const head = `${r.at.slice(0, 16).replace('T', ' ')} UTC  ${r.status}${r.sourceOrderId ? `  order ${safeLine(r.sourceOrderId)}` : ''}${r.forced ? '  (forced)' : ''}`;
    const lines = [
      head,
      `    ${safeLine(r.email ?? '?')} · ${safeLine(r.item ?? '?')}`,
      `    from ${safeLine(from(r))} · profile ${safeLine(r.profile)} · user ${safeLine(r.user)} on ${safeLine(r.host)}`,
      ...(r.error && r.status !== 'filed' ? [`    ${safeLine(r.error)}`] : []),
      ...(r.events.length > 1
        ? [`    ${r.events.length} attempts: ${r.events.map((e) => `${e.status.replace('_', ' ')} ${e.at.slice(0, 16).replace('T', ' ')}`).join(', ')}`]
        : []),
    ];
    out.write(`${first ? '' : '\n\n'}${lines.map((l) => wrapText(l, width, { hard: true })).join('\n')}`);
  };
  return Object.assign(print, { end: () => out.end(pipe ? '' : '\n') });
}
