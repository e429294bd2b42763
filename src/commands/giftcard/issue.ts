import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { ApiError, InterruptedError, NetworkError, OpcliError, UsageError, ValidationError } from '../../errors.js';

/** Flag values of `giftcard issue`. */
export interface IssueOptions {
  claim?: string;
  order: string;
  amount: string;
  email: string;
  name: string;
  customerId?: string;
  bonus: boolean;
  yes: boolean;
  dryRun: boolean;
  force: boolean;
  showCode: boolean;
  json: boolean;
  triggerWaitMs: number;
  lateCheckMs: number;
  pollIntervalMs: number;
}

/** The spec's "about 4.5 seconds" of polling for the trigger's credit. */
export const DEFAULT_TRIGGER_WAIT_MS = 4500;
/** How long the loyalty card is watched after a fallback for a late trigger credit. */
export const DEFAULT_LATE_CHECK_MS = 2000;
export const POLL_INTERVAL_MS = 250;
/** The shortest --trigger-wait and --late-check accepted. */
export const MIN_WAIT_MS = 1000;

interface IssueFlags {
  claim?: string;
  order?: string;
  amount?: string;
  email?: string;
  name?: string;
  customerId?: string;
  bonus?: boolean;
  yes?: boolean;
  dryRun?: boolean;
  force?: boolean;
  showCode?: boolean;
  json?: boolean;
  triggerWait: string;
  lateCheck: string;
}

/** Registers `giftcard issue`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('issue')
    .description('Issue store credit for a claim (or a bonus for an order), exactly once, through the provider chain')
    .option('--claim <id>', 'the claim resolved with store credit')
    .option('--bonus', 'a bonus store credit for an order instead of a claim')
    .option('--order <number>', 'the order number (a reference on the card)')
    .option('--amount <decimal>', 'the amount, e.g. 25.00 (above zero, at most two decimals)')
    .option('--email <email>', "the customer's e-mail")
    .option('--name <name>', "the customer's name")
    .option('--customer-id <id>', "the storefront customer id: finds the loyalty card (needed for the trigger and for top-ups)")
    .option('-y, --yes', 'issue without asking (required when not on a terminal)')
    .option('--dry-run', 'show the requests that would be sent, send nothing')
    .option('--force', 'issue even though the ledger shows an earlier issuance for this claim/order')
    .option('--show-code', 'print the card code in full (masked by default)')
    .option('--trigger-wait <duration>', 'how long to wait for the trigger workflow to post (at least 1s)', '4.5s')
    .option('--late-check <duration>', 'after a fallback, how long to watch for a late trigger credit (at least 1s)', '2s')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard issue --claim C-1001 --order 1001 --amount 25.00 \\
      --email alice@example.com --name "Alice Example" --customer-id cust_1001
  $ opcli giftcard issue --bonus --order 1001 --amount 5 --email bob@example.com --name "Bob Example" --yes
  $ opcli giftcard issue --claim C-1001 --order 1001 --amount 25.00 --email a@b.co --name "A B" --dry-run

The chain (spec order): the trigger workflow (needs --customer-id to confirm), then the credit API
(tops up the loyalty card, or creates a card), then the storefront's native gift card. Every attempt
and outcome goes to the ledger (\`opcli giftcard history\`); a second issuance for one claim is refused.`,
    )
    .action(async (flags: IssueFlags) => {
      await run(await parseFlags(flags), deps);
    });
}

/** Checks the flag combination and turns the flags into options. */
export async function parseFlags(flags: IssueFlags): Promise<IssueOptions> {
  const { parseDuration } = await import('../../flags.js');
  const minHint = 'A shorter wait gives up before the trigger workflow can post, and a fallback then risks paying twice.';
  if (flags.bonus && flags.claim) throw new UsageError('Give either --claim (store credit for a claim) or --bonus, not both.');
  if (!flags.bonus && !flags.claim) throw new UsageError('Missing --claim <id>.', 'Pass --claim for a claim resolved with store credit, or --bonus for a bonus credit on an order.');
  const missing = (['order', 'amount', 'email', 'name'] as const).filter((k) => !flags[k]?.trim());
  if (missing.length) throw new UsageError(`Missing ${missing.map((m) => `--${m}`).join(', ')}.`, 'See `opcli giftcard issue --help` for an example.');
  return {
    claim: flags.claim?.trim(),
    order: (flags.order as string).trim(),
    amount: flags.amount as string,
    email: (flags.email as string).trim(),
    name: (flags.name as string).trim(),
    customerId: flags.customerId?.trim() || undefined,
    bonus: !!flags.bonus,
    yes: !!flags.yes,
    dryRun: !!flags.dryRun,
    force: !!flags.force,
    showCode: !!flags.showCode,
    json: !!flags.json,
    // Shorter windows would fall back (or stop watching) before a trigger could post: a double credit.
    triggerWaitMs: parseDuration(flags.triggerWait, '--trigger-wait', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
    lateCheckMs: parseDuration(flags.lateCheck, '--late-check', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** Validates, checks the ledger, confirms, records the attempt, runs the chain and records the outcome. */
export async function run(opts: IssueOptions, deps: Deps): Promise<void> {
  const [{ z }, { randomUUID }, money, chain, ledgerMod, { providerClient, ProviderRefusedError }, format, output] = await Promise.all([
    import('zod'),
    import('node:crypto'),
    import('../../giftcard/money.js'),
    import('../../giftcard/chain.js'),
    import('../../giftcard/ledger.js'),
    import('../../giftcard/provider.js'),
    import('../../giftcard/format.js'),
    import('../../output.js'),
  ]);
  const amountCents = money.parseAmount(opts.amount);
  if (!z.email().safeParse(opts.email).success) {
    throw new ValidationError(`Invalid --email "${opts.email}": expected a valid e-mail address (the provider needs one to create a card).`, [
      { path: 'email', message: 'expected a valid e-mail address' },
    ]);
  }
  const req = {
    issuance: randomUUID(),
    claimId: opts.claim,
    orderNumber: opts.order,
    bonus: opts.bonus,
    amountCents,
    email: opts.email,
    name: opts.name,
    customerId: opts.customerId,
  };
  const { client, settings } = await providerClient(deps);
  const profile = await deps.profile();
  const plan = chain.planChain(settings, req, profile.baseUrl);
  // Validates every body with the shared schemas before anything is sent.
  chain.requestBodies(req, settings);
  const timing = { triggerWaitMs: opts.triggerWaitMs, lateCheckMs: opts.lateCheckMs, pollIntervalMs: opts.pollIntervalMs };
  const key = ledgerMod.issuanceKey(req);
  const what = req.bonus ? `bonus credit for order #${req.orderNumber}` : `claim ${req.claimId}`;
  const ledger = new ledgerMod.Ledger(deps.configDir());
  for (const note of plan.notes) deps.err(`Note: ${note}\n`);

  if (opts.dryRun) {
    const steps = chain.dryRunSteps(plan, req, client, settings, timing);
    const earlier = ledgerMod.blockingIssuances(ledger.issuances(), key);
    if (opts.json) {
      output.printJson(deps, { dryRun: true, firstPath: plan.first, amount: money.formatCents(amountCents), earlierIssuances: earlier.length, requests: steps });
      return;
    }
    deps.err(`Dry run: nothing is sent and nothing is recorded. First path: ${chain.describePath(plan.first)}.\n`);
    if (earlier.length) deps.err(`Note: the ledger already holds ${earlier.length} issuance(s) for ${what}; a real run would be refused without --force.\n`);
    for (const [i, step] of steps.entries()) {
      deps.out(`${i + 1}. ${step.when}\n   ${step.request.method} ${step.request.url}\n`);
      for (const [h, v] of Object.entries(step.request.headers)) deps.out(`   ${h}: ${v}\n`);
      if (step.request.body !== undefined) deps.out(`   ${JSON.stringify(step.request.body)}\n`);
    }
    return;
  }

  // Refuse a duplicate before asking anything; checked again under the lock below.
  refuseDuplicates(ledgerMod.blockingIssuances(ledger.issuances(), key), what, req, opts.force, money.formatCents);

  const content = chain.cardContent(req);
  const firstDescription =
    plan.first === 'trigger'
      ? `the trigger workflow, then the credit API if it does not post within ${(timing.triggerWaitMs / 1000).toFixed(1)} s`
      : chain.describePath(plan.first);
  const summary = [
    `  Customer    ${req.name} <${req.email}>${req.customerId ? ` (${req.customerId})` : ''}`,
    `  Amount      ${money.formatCents(amountCents)}`,
    `  References  ${req.bonus ? `order #${req.orderNumber} (bonus)` : `claim ${req.claimId}, order #${req.orderNumber}`}`,
    `  Subject     ${content.subject}`,
    `  First path  ${firstDescription}`,
  ].join('\n');
  if (!opts.yes) {
    if (!deps.canPrompt()) {
      throw new UsageError('Issuing store credit moves money and needs a confirmation, but nobody can answer a prompt here.', 'Pass --yes to issue, or --dry-run to see the requests first.');
    }
    deps.err(`About to issue store credit:\n${summary}\n`);
    const ok = await (await deps.prompter()).confirm({ message: `Issue ${money.formatCents(amountCents)} to ${req.email}?`, default: false });
    if (!ok) throw new OpcliError('Cancelled: nothing was issued and nothing was recorded.');
  } else if (!opts.json) {
    deps.err(`Issuing store credit:\n${summary}\n`);
  }

  const user = ledgerMod.osUser();
  const stamp = () => new Date(deps.now()).toISOString();
  const common = { v: 1 as const, issuance: req.issuance, key, user };
  await ledger.withLock(async () => {
    refuseDuplicates(ledgerMod.blockingIssuances(ledger.issuances(), key), what, req, opts.force, money.formatCents);
    ledger.append({
      ...common,
      at: stamp(),
      type: 'attempt',
      claimId: req.claimId,
      orderNumber: req.orderNumber,
      bonus: req.bonus,
      amountCents,
      amount: money.formatCents(amountCents),
      email: req.email,
      name: req.name,
      customerId: req.customerId,
      profile: profile.name,
      shopUrl: settings.shopUrl,
      firstPath: plan.first,
      forced: opts.force,
      host: ledgerMod.hostName(),
    });
  });

  const progress = { moneyMayHaveMoved: false, triggerPosted: false, notes: [] as string[] };
  let result: Awaited<ReturnType<typeof chain.runChain>>;
  try {
    result = await chain.runChain(req, plan, {
      client,
      settings,
      timing,
      now: deps.now,
      sleep: (ms) => deps.sleep(ms, deps.signal),
      say: (text) => {
        if (!opts.json) deps.err(`${text}\n`);
      },
    }, progress);
  } catch (error) {
    // A refusal (4xx, or a connection that provably never reached the server) moved no money; but
    // once the trigger was posted its credit may still arrive, whatever happens after.
    const refused =
      error instanceof ProviderRefusedError ||
      (error instanceof ApiError && error.status < 500) ||
      (error instanceof NetworkError && !error.sent) ||
      error instanceof UsageError;
    const status = progress.triggerPosted || (progress.moneyMayHaveMoved && !refused) ? 'uncertain' : 'failed';
    const message = error instanceof Error ? error.message : String(error);
    await ledger.appendLocked({
      ...common,
      at: stamp(),
      type: 'outcome',
      status,
      triggerPosted: progress.triggerPosted,
      possibleDoubleCredit: false,
      error: deps.redactor.redact(message),
      notes: progress.notes,
    });
    for (const note of progress.notes) deps.err(`Note: ${note}\n`);
    if (deps.signal.aborted) {
      deps.err(
        status === 'uncertain'
          ? `Interrupted after a request that moves money was sent: store credit for ${what} may have been issued; recorded as uncertain in the ledger.\n`
          : `Interrupted before any money was sent for ${what}; recorded as failed in the ledger.\n`,
      );
      throw new InterruptedError();
    }
    if (status === 'uncertain') {
      throw new OpcliError(`Store credit for ${what} may or may not have been issued: ${message}`, {
        hint:
          (error instanceof OpcliError && error.hint ? `${error.hint}\n` : '') +
          `Recorded as uncertain in the ledger. Check the customer's card at the provider before anything else; \`opcli giftcard history --claim …\` shows the record, and --force issues again only when you are sure nothing was paid.`,
        cause: error,
      });
    }
    throw error;
  }

  await ledger.appendLocked({
    ...common,
    at: stamp(),
    type: 'outcome',
    status: 'issued',
    path: result.path,
    cardId: result.card.gift_card_id,
    balanceCents: result.balanceCents,
    triggerPosted: result.triggerPosted,
    watch: result.watch,
    possibleDoubleCredit: result.possibleDoubleCredit,
    notes: result.notes,
  });

  const code = opts.showCode ? result.card.code : format.maskCode(result.card.code);
  if (!opts.showCode) deps.redactor.add(result.card.code);
  for (const warning of result.warnings) deps.err(`WARNING: ${warning}\n`);
  if (opts.json) {
    output.printJson(deps, {
      status: 'issued',
      issuance: req.issuance,
      claimId: req.claimId ?? null,
      orderNumber: req.orderNumber,
      bonus: req.bonus,
      amount: money.formatCents(amountCents),
      customer: { email: req.email, name: req.name, customerId: req.customerId ?? null },
      path: result.path,
      pathDescription: chain.describePath(result.path),
      fellBackFromTrigger: result.fellBack,
      triggerPosted: result.triggerPosted,
      cardId: result.card.gift_card_id,
      balance: money.formatCents(result.balanceCents),
      code,
      expiresOn: result.card.expires_on ?? null,
      possibleDoubleCredit: result.possibleDoubleCredit,
      warnings: result.warnings,
      notes: result.notes,
    });
    return;
  }
  for (const note of result.notes) deps.err(`Note: ${note}\n`);
  const mode = output.outputMode(deps, {});
  await output.printRecord(
    deps,
    [
      ['Path', chain.describePath(result.path)],
      ['Card', result.card.gift_card_id],
      ['Balance', money.formatCents(result.balanceCents)],
      ['Code', code],
      ['Amount', money.formatCents(amountCents)],
      ['Issuance', req.issuance],
      ...(result.possibleDoubleCredit ? ([['Warning', 'possible double credit']] as [string, unknown][]) : []),
    ],
    mode,
  );
  deps.err(`Issued ${money.formatCents(amountCents)} for ${what}; recorded in the ledger.\n`);
}

/** Refuses when the ledger holds an issuance for the same key, unless forced. */
function refuseDuplicates(
  earlier: import('../../giftcard/ledger.js').Issuance[],
  what: string,
  req: { claimId?: string; orderNumber: string; bonus: boolean },
  force: boolean,
  formatCents: (c: number) => string,
): void {
  if (earlier.length === 0 || force) return;
  const last = earlier[earlier.length - 1] as (typeof earlier)[number];
  const a = last.attempt;
  const o = last.outcome;
  const lookup = req.bonus ? `--order ${req.orderNumber}` : `--claim ${req.claimId}`;
  const record = `${a.at} by ${a.user}: ${a.amount ?? formatCents(a.amountCents)} to ${a.email}${o?.path ? ` via ${o.path}` : ''}${o?.cardId ? ` (card ${o.cardId})` : ''}, issuance ${a.issuance}`;
  if (!o) {
    throw new OpcliError(`An earlier attempt to issue store credit for ${what} has no recorded outcome (${record}).`, {
      hint: `It is still running, or it stopped before finishing and may have paid. Check the customer's card at the provider and \`opcli giftcard history ${lookup}\`; pass --force only when you are sure nothing was paid.`,
      details: { earlier: last },
    });
  }
  if (o.status === 'uncertain') {
    throw new OpcliError(`An earlier attempt to issue store credit for ${what} ended with an unknown outcome (${record}).`, {
      hint: `It may have paid. Check the customer's card at the provider and \`opcli giftcard history ${lookup}\`; pass --force only when you are sure nothing was paid.`,
      details: { earlier: last },
    });
  }
  throw new OpcliError(`Store credit for ${what} was already issued (${record}).`, {
    hint: `See \`opcli giftcard history ${lookup}\`. To issue again anyway, pass --force.`,
    details: { earlier: last },
  });
}
