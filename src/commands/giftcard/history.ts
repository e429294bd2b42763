import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { OpcliError, UsageError } from '../../errors.js';
import { textProblem } from '../../text/flag-text.js';
import { safeLine, safeText } from '../../text/safe.js';

/** Flag values of `giftcard history`. */
export interface HistoryOptions {
  claim?: string;
  order?: string;
  json: boolean;
  verify: boolean;
  utc: boolean;
}

/** Registers `giftcard history`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('history')
    .description('Show the ledger of store credit issuances; --verify re-reads balances to find late double credits')
    .option('--claim <id>', 'only this claim')
    .option('--order <number>', 'only this order number')
    .option('--verify', 're-read the loyalty cards of issuances that fell back from the trigger, and flag late trigger credits')
    .option('--utc', 'show times in UTC (default: local time)')
    .option('--json', 'print JSON (times in ISO 8601 UTC)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard history
  $ opcli giftcard history --claim C-1001 --json
  $ opcli giftcard history --verify

The ledger is shared by every profile on this machine: an issuance is known by the provider's shop,
the service's store and the claim (or order), and each line names the profile that issued it.
Exit codes: 0, or 3 when --verify finds a possible double credit (check those cards).`,
    )
    .action(async (flags: { claim?: string; order?: string; json?: boolean; verify?: boolean; utc?: boolean }) => {
      checkFilter('--claim', flags.claim);
      checkFilter('--order', flags.order);
      await run({ claim: flags.claim, order: flags.order, json: !!flags.json, verify: !!flags.verify, utc: !!flags.utc }, deps);
    });
}

/** A filter no one typed on purpose would answer "no issuances" and hide the ones that exist. */
function checkFilter(flag: string, value: string | undefined): void {
  const problem = value === undefined ? undefined : textProblem(value);
  if (problem)
    throw new UsageError(
      `${flag} ${problem}.`,
      `Pass the ${flag === '--claim' ? 'claim id, e.g. --claim C-1001' : 'order number, e.g. --order 1001'}, or leave ${flag} out to see every issuance.`,
    );
}

/** Prints the ledger's issuances (filtered), and with --verify checks them for late trigger credits. */
export async function run(opts: HistoryOptions, deps: Deps): Promise<void> {
  const [ledgerMod, history, output] = await Promise.all([import('../../giftcard/ledger.js'), import('../../giftcard/history.js'), import('../../output.js')]);
  const ledger = new ledgerMod.Ledger(deps.configDir());
  const { rows, verified, doubles } = await history.readHistory(
    ledger,
    { claim: opts.claim, order: opts.order },
    {
      provider: opts.verify ? async () => (await import('../../giftcard/provider.js')).providerClient(deps) : undefined,
      now: deps.now,
      user: ledgerMod.osUser(),
      notice: (message) => deps.err(`Warning: ${safeText(message)}\n`),
      warn: (message) => deps.err(`WARNING: ${safeText(message)}\n`),
    },
  );
  if (opts.json) {
    output.printJson(deps, opts.verify ? { ledger: ledger.path, issuances: rows, verify: verified } : { ledger: ledger.path, issuances: rows });
  } else {
    if (rows.length === 0) deps.err(`No issuances recorded${opts.claim || opts.order ? ' for this filter' : ''} (${ledger.path}).\n`);
    else {
      await output.printTable(
        deps,
        [
          { header: 'TIME', value: (r) => history.formatTime(r.at, opts.utc) },
          { header: 'FOR', value: (r) => (r.bonus ? `bonus order #${r.orderNumber}` : `claim ${r.claimId}`) },
          { header: 'AMOUNT', value: (r) => `${r.amount} ${r.currency}` },
          { header: 'E-MAIL', value: (r) => r.email },
          { header: 'STATUS', value: (r) => (r.possibleDoubleCredit ? `${r.status}, POSSIBLE DOUBLE CREDIT` : r.status) },
          { header: 'PATH', value: (r) => r.path ?? '' },
          { header: 'CARD', value: (r) => r.cardId ?? '' },
          { header: 'PROFILE', value: (r) => r.profile },
          { header: 'USER', value: (r) => r.user },
        ],
        rows,
        output.outputMode(deps, {}),
      );
    }
    if (opts.verify) {
      deps.err(`Verified ${verified.length} issuance(s) that fell back from the trigger: ${doubles.length} possible double credit(s).\n`);
      for (const v of verified) if (v.result === 'error') deps.err(`Could not check ${safeLine(v.key)}: ${safeText(v.message)}\n`);
    }
  }
  if (doubles.length) {
    throw new OpcliError(`${doubles.length} issuance(s) show a possible double credit: the customer may have been paid twice.`, {
      exitCode: 3,
      hint: 'Check those cards at the provider and take back the extra credit where the customer was paid twice.',
    });
  }
}
