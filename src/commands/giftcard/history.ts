import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { OpcliError } from '../../errors.js';

/** Flag values of `giftcard history`. */
export interface HistoryOptions {
  claim?: string;
  order?: string;
  json: boolean;
  verify: boolean;
}

/** Registers `giftcard history`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('history')
    .description('Show the ledger of store credit issuances; --verify re-reads balances to find late double credits')
    .option('--claim <id>', 'only this claim')
    .option('--order <number>', 'only this order number')
    .option('--verify', 're-read the loyalty cards of issuances that fell back from the trigger, and flag late trigger credits')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard history
  $ opcli giftcard history --claim C-1001 --json
  $ opcli giftcard history --verify

Exit codes: 0, or 1 when --verify finds a possible double credit.`,
    )
    .action(async (flags: { claim?: string; order?: string; json?: boolean; verify?: boolean }) =>
      run({ claim: flags.claim, order: flags.order, json: !!flags.json, verify: !!flags.verify }, deps),
    );
}

interface VerifyResult {
  issuance: string;
  key: string;
  cardId: string | null;
  result: 'ok' | 'possible-double-credit' | 'error';
  message: string;
}

/** Prints the ledger's issuances (filtered), and with --verify checks them for late trigger credits. */
export async function run(opts: HistoryOptions, deps: Deps): Promise<void> {
  const [ledgerMod, money, output, chain] = await Promise.all([
    import('../../giftcard/ledger.js'),
    import('../../giftcard/money.js'),
    import('../../output.js'),
    import('../../giftcard/chain.js'),
  ]);
  const ledger = new ledgerMod.Ledger(deps.configDir());
  const { records, damaged } = ledger.read();
  if (damaged.length) deps.err(`Warning: ${ledger.path} has unreadable line(s) ${damaged.join(', ')}; they are skipped here, not removed.\n`);
  const all = ledger.issuances(records);
  const matches = (i: (typeof all)[number]) =>
    (!opts.claim || i.attempt.claimId === opts.claim) && (!opts.order || i.attempt.orderNumber === opts.order);
  const shown = all.filter(matches);

  const verified: VerifyResult[] = [];
  if (opts.verify) {
    const { providerClient } = await import('../../giftcard/provider.js');
    const { client } = await providerClient(deps);
    for (const [index, entry] of all.entries()) {
      const o = entry.outcome;
      if (!matches(entry) || !o?.watch || o.status !== 'issued') continue;
      const watch = o.watch;
      const base = { issuance: entry.attempt.issuance, key: entry.attempt.key, cardId: watch.cardId };
      if (o.possibleDoubleCredit || entry.warnings.length) {
        verified.push({ ...base, result: 'possible-double-credit', message: 'flagged earlier' });
        continue;
      }
      // Credits this ledger put on the same card later are not late trigger credits.
      const laterCents = all
        .slice(index + 1)
        .filter((l) => l.outcome?.status === 'issued' && watch.cardId && l.outcome.cardId === watch.cardId)
        .reduce((sum, l) => sum + l.attempt.amountCents, 0);
      try {
        const card = await client.lookup(watch.customerId);
        if (card && chain.lateCreditSeen(watch, card, entry.attempt.amountCents, laterCents)) {
          const message = chain.doubleCreditWarning({ amountCents: entry.attempt.amountCents, customerId: watch.customerId }, card.gift_card_id);
          await ledger.appendLocked({
            v: 1,
            issuance: entry.attempt.issuance,
            key: entry.attempt.key,
            at: new Date(deps.now()).toISOString(),
            user: ledgerMod.osUser(),
            type: 'warning',
            kind: 'possible-double-credit',
            message,
            cardId: card.gift_card_id,
            balanceCents: money.numberToCents(card.amount),
          });
          entry.warnings.push({ type: 'warning', kind: 'possible-double-credit', message } as never);
          verified.push({ ...base, cardId: card.gift_card_id, result: 'possible-double-credit', message });
          deps.err(`WARNING: ${message}\n`);
        } else {
          verified.push({ ...base, result: 'ok', message: `balance ${card ? money.formatCents(money.numberToCents(card.amount)) : 'none'}: no late trigger credit` });
        }
      } catch (error) {
        verified.push({ ...base, result: 'error', message: error instanceof Error ? error.message : String(error) });
      }
    }
  }

  const rows = shown.map((i) => ({
    at: i.attempt.at,
    issuance: i.attempt.issuance,
    claimId: i.attempt.claimId ?? null,
    orderNumber: i.attempt.orderNumber,
    bonus: i.attempt.bonus,
    amount: i.attempt.amount,
    email: i.attempt.email,
    customerId: i.attempt.customerId ?? null,
    status: i.outcome?.status ?? 'attempt',
    path: i.outcome?.path ?? null,
    cardId: i.outcome?.cardId ?? null,
    balance: i.outcome?.balanceCents !== undefined ? money.formatCents(i.outcome.balanceCents) : null,
    possibleDoubleCredit: !!i.outcome?.possibleDoubleCredit || i.warnings.length > 0,
    user: i.attempt.user,
    profile: i.attempt.profile,
    forced: i.attempt.forced,
    error: i.outcome?.error ?? null,
    warnings: i.warnings.map((w) => w.message),
  }));
  const doubles = verified.filter((v) => v.result === 'possible-double-credit');

  if (opts.json) {
    output.printJson(deps, opts.verify ? { ledger: ledger.path, issuances: rows, verify: verified } : { ledger: ledger.path, issuances: rows });
  } else {
    if (rows.length === 0) deps.err(`No issuances recorded${opts.claim || opts.order ? ' for this filter' : ''} (${ledger.path}).\n`);
    else {
      await output.printTable(
        deps,
        [
          { header: 'TIME', value: (r) => r.at },
          { header: 'FOR', value: (r) => (r.bonus ? `bonus order #${r.orderNumber}` : `claim ${r.claimId}`) },
          { header: 'AMOUNT', value: (r) => r.amount },
          { header: 'STATUS', value: (r) => (r.possibleDoubleCredit ? `${r.status}, POSSIBLE DOUBLE CREDIT` : r.status) },
          { header: 'PATH', value: (r) => r.path ?? '' },
          { header: 'CARD', value: (r) => r.cardId ?? '' },
          { header: 'USER', value: (r) => r.user },
        ],
        rows,
        output.outputMode(deps, {}),
      );
    }
    if (opts.verify) {
      deps.err(`Verified ${verified.length} issuance(s) that fell back from the trigger: ${doubles.length} possible double credit(s).\n`);
      for (const v of verified) if (v.result === 'error') deps.err(`Could not check ${v.key}: ${v.message}\n`);
    }
  }
  if (doubles.length) {
    throw new OpcliError(`${doubles.length} issuance(s) show a possible double credit.`, {
      hint: 'Check those cards at the provider and reverse the extra credit where the customer was paid twice.',
    });
  }
}
