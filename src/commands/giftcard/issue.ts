import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { ExitCode, InterruptedError, PlainExit } from '../../core/errors.js';
import { type IssueFlags, type IssueOptions, parseFlags } from './issue-flags.js';
import { confirmIssue } from './issue-confirm.js';
import { completeFields } from './issue-input.js';
import * as render from './issue-render.js';
import * as service from '../../giftcard/issuance.js';
import * as ledgerMod from '../../giftcard/ledger.js';
import { openLedger } from '../../giftcard/ledger-db.js';
import { providerClient } from '../../giftcard/provider.js';

export type { IssueOptions } from './issue-flags.js';

/** Registers `giftcard issue`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('issue')
    .description('Issue store credit for a claim (or a bonus for an order), exactly once, through the provider chain; asks for missing fields on a terminal')
    .option('--claim <id>', 'the claim resolved with store credit')
    .option('--bonus', 'a bonus store credit for an order instead of a claim')
    .option('--order <number>', 'the order number (a reference on the card)')
    .option('--amount <decimal>', 'the amount in the profile currency (default USD), e.g. 25.00: above zero, at most two decimals')
    .option('--email <email>', "the customer's e-mail")
    .option('--name <name>', "the customer's name")
    .option('--customer-id <id>', 'the storefront customer id: finds the loyalty card (needed for the trigger and for top-ups)')
    .option('-y, --yes', 'issue without asking (required when not on a terminal)')
    .option('--email-confirmed', 'the e-mail is right as typed: issue even though its domain looks misspelt (refused under --yes otherwise)')
    .option('--dry-run', 'show the requests that would be sent, send nothing')
    .option('--force', 'issue even though the ledger holds an earlier issuance for this claim/order (however it was written) or a similar credit')
    .option('--allow-large', 'issue an amount above the profile ceiling (setting max-amount, default 1000.00)')
    .option('--show-code', 'print the card code in full (masked by default)')
    .option('--trigger-wait <duration>', 'how long to wait for the trigger workflow to post (at least 1s)', '4.5s')
    .option('--late-check <duration>', 'after a fallback, how long to watch for a late trigger credit (at least 1s)', '2s')
    .option('--json [fields]', 'print the result as JSON; with fields (comma-separated), only those (docs/json.md)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard issue                       # asks for each field on a terminal
  $ opcli giftcard issue --claim C-1001 --order 1001 --amount 25.00 \\
      --email alice@example.com --name "Alice Example" --customer-id cust_1001
  $ opcli giftcard issue --bonus --order 1001 --amount 5 --email bob@example.com --name "Bob Example" --yes
  $ opcli giftcard issue --claim C-1001 --order 1001 --amount 25.00 --email a@b.co --name "A B" --dry-run
  $ opcli giftcard issue --claim C-1002 --order 1002 --amount 10 --email dave@gmial.co.uk --name "Dave" \\
      --yes --email-confirmed                  # the domain looks misspelt but is right

The chain (spec order): the trigger workflow (needs --customer-id to confirm), then the credit API
(tops up the loyalty card, or creates a card), then the storefront's native gift card. Every attempt
and outcome goes to the ledger (\`opcli giftcard history\`). A second issuance for one claim or order is
held, however the id is written (c-2001, C‐2001, #1003), and so is the same amount to the same
customer within 30 days under another id: --force issues anyway. An amount above max-amount needs
--allow-large. An e-mail whose domain looks misspelt (gmial.com) is asked about on a terminal, and
refused under --yes unless --email-confirmed. A ledger line opcli cannot read stops every issuance (\`opcli giftcard repair\`).
Exit codes: 0 issued; 1 failed (nothing issued) or outcome unknown; 2 bad input, an amount above the
ceiling or a damaged ledger (nothing sent); 3 held by an earlier record (nothing sent), or issued but
the customer may have been paid twice (read the message); 1 also when you decline the confirmation
(nothing issued); 130 interrupted (Ctrl-C).`,
    )
    .action(async (flags: IssueFlags) => {
      await run(await parseFlags(flags), deps);
    });
}

/** Prepares the issuance (asking for missing fields), confirms it, issues it and renders the outcome. */
export async function run(opts: IssueOptions, deps: Deps): Promise<void> {
  const { client, settings } = await providerClient(deps);
  const profile = await deps.profile();
  const ledger = await openLedger(deps.configDir(), profile, { env: deps.env, cwd: deps.cwd });
  try {
    await issueWith(ledger, opts, deps, client, settings, profile);
  } finally {
    await ledger.close();
  }
}

/** The issuance against an open ledger (a file, or the team's record database). */
async function issueWith(
  ledger: ledgerMod.CreditLedger,
  opts: IssueOptions,
  deps: Deps,
  client: Awaited<ReturnType<typeof providerClient>>['client'],
  settings: Awaited<ReturnType<typeof providerClient>>['settings'],
  profile: Awaited<ReturnType<Deps['profile']>>,
): Promise<void> {
  const prepared = await service.prepare({
    settings,
    profile,
    ledger,
    now: deps.now,
    fields: (limits) => completeFields(opts, deps, limits),
    notice: (note) => deps.err(`Note: ${note}\n`),
    allowLarge: opts.allowLarge,
    force: opts.force,
    dryRun: opts.dryRun,
  });
  const timing = { triggerWaitMs: opts.triggerWaitMs, lateCheckMs: opts.lateCheckMs, pollIntervalMs: opts.pollIntervalMs };
  if (opts.dryRun) return render.dryRun(deps, prepared, service.planDryRun(prepared, client, timing), opts.json);

  const summary = render.summary(service.summaryLines(prepared, timing));
  if (!opts.yes) await confirmIssue(deps, prepared, summary);
  else if (!opts.json) deps.err(`Issuing store credit:\n${summary}\n`);

  let result: Awaited<ReturnType<typeof service.issue>>;
  try {
    result = await service.issue(prepared, {
      client,
      ledger,
      timing,
      now: deps.now,
      sleep: (ms) => deps.sleep(ms, deps.signal),
      say: (text) => {
        if (!opts.json) deps.err(`${text}\n`);
      },
      redact: (text) => deps.redactor.redact(text),
      aborted: () => deps.signal.aborted,
      user: ledgerMod.osUser(),
      host: ledgerMod.hostName(),
      force: opts.force,
    });
  } catch (error) {
    if (!(error instanceof service.IssuanceFailedError)) throw error;
    for (const note of error.notes) deps.err(`Note: ${note}\n`);
    if (!error.interrupted) throw error;
    deps.err(`${error.message}\n`);
    throw new InterruptedError();
  }
  await render.issued(deps, prepared, result, { json: opts.json, fields: opts.jsonFields, showCode: opts.showCode });
  // CHOICE (docs/spec-choices.md#possible-double-credit-exits-3): the last thing on the screen, and the exit code says: attention.
  if (result.possibleDoubleCredit) throw new PlainExit(result.warnings.map((w) => `WARNING: ${w}`).join('\n'), ExitCode.partial);
}
