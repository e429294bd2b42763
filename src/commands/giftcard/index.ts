/**
 * `opcli giftcard` and `giftcard issue`: the flags checked, the missing fields asked on a terminal,
 * the summary confirmed, the service (src/giftcard/issuance.ts) run, the card shown.
 */
import { POPULAR_DOMAINS, POPULAR_TLDS, run as spellCheck } from '@zootools/email-spell-checker';
import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { lazyGroup, lazyVerb } from '../../cli/program.js';
import { ExitCode, InterruptedError, PlainExit, UsageError, ValidationError } from '../../core/errors.js';
import { checkText, parseDuration } from '../../core/flags.js';
import { jsonFields, pickFields } from '../../core/json-fields.js';
import * as output from '../../core/output.js';
import * as service from '../../giftcard/issuance.js';
import { type ChainResult, describePath, type DryRunStep, type FieldLimits, type PreparedIssue, type TypedFields } from '../../giftcard/issuance.js';
import { hostName, osUser } from '../../config/user-name.js';
import { openLedger } from '../../giftcard/ledger-db.js';
import { formatCents, formatMoney, parseAmount } from '../../giftcard/money.js';
import { providerClient } from '../../giftcard/provider.js';
import { EmailAddress } from '../../schemas.js';
import { safeLine, shellQuote, textProblem } from '../../text/safe.js';

/** Flag values of `giftcard issue`: the fields as typed, then how to issue. */
interface IssueOptions extends Partial<TypedFields> {
  bonus: boolean;
  yes: boolean;
  /** The e-mail is right as typed, even where its domain looks misspelt. */
  emailConfirmed: boolean;
  dryRun: boolean;
  force: boolean;
  allowLarge: boolean;
  showCode: boolean;
  json: boolean;
  /** `--json FIELDS`: only these fields of the issued card's record. */
  jsonFields?: string[];
  /** `--trigger-wait`, `--late-check` and the poll interval, as the chain reads them. */
  timing: service.ChainTiming;
}

const POLL_INTERVAL_MS = 250;
const MIN_WAIT_MS = 1000;

type IssueFlags = Partial<Omit<IssueOptions, 'timing' | 'json' | 'jsonFields'>> & {
  triggerWait: string;
  lateCheck: string;
  /** `--json`, alone or with a field list. */
  json?: boolean | string;
};

/** The fields of the issued card's JSON record, which `--json FIELDS` selects from (docs/json.md). */
const ISSUED_FIELDS = [
  'status',
  ...service.CREDIT_FIELDS,
  'customer',
  'profile',
  'path',
  'pathDescription',
  'fellBackFromTrigger',
  'triggerPosted',
  'cardId',
  'balance',
  'code',
  'expiresOn',
  'possibleDoubleCredit',
  'warnings',
  'notes',
] as const;

/** The text flags checked with textProblem, and what to pass instead. */
const TEXT_FLAGS = [
  ['claim', 'claim', 'Pass the id of the claim resolved with store credit, e.g. --claim C-1001 (or --bonus for a bonus credit).'],
  ['order', 'order', 'Pass the order number, e.g. --order 1001.'],
  ['email', 'email', "Pass the customer's e-mail, e.g. --email alice@example.com."],
  ['name', 'name', 'Pass the customer\'s name, e.g. --name "Alice Example".'],
  ['customer-id', 'customerId', 'Pass the storefront customer id, e.g. --customer-id cust_1001, or leave --customer-id out (a new card is created).'],
] as const;

/** Why a (non-blank) answer typed at a prompt cannot be meant, as for the flag, or true. */
function answerProblem(value: string, what: string): true | string {
  const problem = textProblem(value);
  return problem ? `${what} ${problem}` : true;
}

/** Checks the flags and turns them into options. */
function parseFlags(flags: IssueFlags): IssueOptions {
  const minHint = 'A shorter wait gives up before the trigger workflow can post, and a fallback then risks paying twice.';
  if (flags.bonus && flags.claim !== undefined) throw new UsageError('Give either --claim (store credit for a claim) or --bonus, not both.');
  const fields = jsonFields(flags.json, '--json', ISSUED_FIELDS);
  if (fields && flags.dryRun)
    throw new UsageError('--json FIELDS selects fields of the issued card; a dry run prints its plan whole.', 'Use --json alone with --dry-run.');
  // Money moves on these values and the ledger keys on them: a value no one typed on purpose stops here.
  for (const [flag, key, hint] of TEXT_FLAGS) checkText(`--${flag}`, flags[key], hint);
  const trim = (v: string | undefined) => v?.trim() || undefined;
  return {
    claim: trim(flags.claim),
    bonus: !!flags.bonus,
    order: trim(flags.order),
    amount: flags.amount,
    email: trim(flags.email),
    name: trim(flags.name),
    customerId: trim(flags.customerId),
    yes: !!flags.yes,
    emailConfirmed: !!flags.emailConfirmed,
    dryRun: !!flags.dryRun,
    force: !!flags.force,
    allowLarge: !!flags.allowLarge,
    showCode: !!flags.showCode,
    json: !!flags.json,
    jsonFields: fields,
    timing: {
      // Shorter windows would fall back (or stop watching) before a trigger could post: a double credit.
      triggerWaitMs: parseDuration(flags.triggerWait, '--trigger-wait', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
      lateCheckMs: parseDuration(flags.lateCheck, '--late-check', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
      pollIntervalMs: POLL_INTERVAL_MS,
    },
  };
}

/** `opcli giftcard`: configure the provider, issue store credit exactly once, read the ledger. */
export const register = lazyGroup({
  name: 'giftcard',
  description: 'Issue store credit through the gift card provider chain, exactly once, with a ledger',
  examples: `  $ opcli giftcard setup --check
  $ opcli giftcard issue --claim C-1001 --order 1001 --amount 25.00 --email alice@example.com \\
      --name "Alice Example" --customer-id cust_1001
  $ opcli giftcard history --verify`,
  verbs: {
    setup: lazyVerb(() => import('./setup.js')),
    issue: registerIssue,
    history: lazyVerb(() => import('./history.js')),
    repair: lazyVerb(() => import('./repair.js')),
  },
});

function registerIssue(group: Command, deps: Deps): void {
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
      await run(parseFlags(flags), deps);
    });
}

/** Prepares the issuance (asking for missing fields), confirms it, issues it and renders the outcome. */
export async function run(opts: IssueOptions, deps: Deps): Promise<void> {
  const { client, settings } = await providerClient(deps);
  const profile = await deps.profile();
  const ledger = await openLedger(deps.configDir(), profile, { env: deps.env, cwd: deps.cwd });
  try {
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
    if (opts.dryRun) return dryRun(deps, prepared, service.planDryRun(prepared, client, opts.timing), opts.json);

    const summary = output.alignedLines(service.summaryLines(prepared, opts.timing));
    if (!opts.yes) await confirmIssue(deps, prepared, summary);
    else if (!opts.json) deps.err(`Issuing store credit:\n${summary}\n`);

    let result: ChainResult;
    try {
      result = await service.issue(prepared, {
        client,
        ledger,
        timing: opts.timing,
        now: deps.now,
        sleep: (ms) => deps.sleep(ms, deps.signal),
        say: (text) => {
          if (!opts.json) deps.err(`${text}\n`);
        },
        redact: (text) => deps.redactor.redact(text),
        aborted: () => deps.signal.aborted,
        user: osUser(),
        host: hostName(),
        force: opts.force,
      });
    } catch (error) {
      if (!(error instanceof service.IssuanceFailedError)) throw error;
      for (const note of error.notes) deps.err(`Note: ${note}\n`);
      if (error.exitCode !== ExitCode.interrupted) throw error;
      deps.err(`${error.message}\n`);
      throw new InterruptedError();
    }
    await issued(deps, prepared, result, { json: opts.json, fields: opts.jsonFields, showCode: opts.showCode });
    // CHOICE (docs/spec-choices.md#possible-double-credit-exits-3): the last thing on the screen, and the exit code says: attention.
    if (result.possibleDoubleCredit) throw new PlainExit(result.warnings.map((w) => `WARNING: ${w}`).join('\n'), ExitCode.partial);
  } finally {
    await ledger.close();
  }
}

const REQUIRED = ['order', 'amount', 'email', 'name'] as const;

const isEmail = (v: string) => EmailAddress.safeParse(v.trim()).success;

function emailProblem(value: string): true | string {
  return isEmail(value) ? true : 'expected an e-mail address such as alice@example.com';
}

/** Asks for the missing fields (or names their flags when nobody can answer), the ledger asked as soon as the claim or order is known. */
async function completeFields(fields: IssueOptions, deps: Deps, limits: FieldLimits): Promise<TypedFields> {
  const { currency, known } = limits;
  const ceiling = { maxCents: limits.maxCents, allowLarge: fields.allowLarge };
  const f = { ...fields };
  const knownIds = async () => {
    if (f.bonus ? f.order?.trim() : f.claim?.trim()) await known({ claimId: f.claim?.trim(), orderNumber: f.order?.trim() ?? '', bonus: f.bonus });
  };
  const missing = [...(!f.bonus && !f.claim?.trim() ? ['claim'] : []), ...REQUIRED.filter((k) => !f[k]?.trim())];
  if (missing.length && !deps.canPrompt()) {
    throw new UsageError(
      `Missing ${missing.map((m) => `--${m}`).join(', ')}.`,
      f.bonus || !missing.includes('claim')
        ? 'See `opcli giftcard issue --help` for an example.'
        : 'Pass --claim for a claim resolved with store credit, or --bonus for a bonus credit on an order. See `opcli giftcard issue --help`.',
    );
  }
  await knownIds();
  if (missing.length) {
    const prompter = await deps.prompter();
    const required = (what: string) => (v: string) => (v.trim() ? answerProblem(v, what) : `${what} is needed`);
    if (missing.includes('claim')) {
      f.claim = await prompter.input({ message: 'Claim id (the claim resolved with store credit):', validate: required('the claim id') });
      await knownIds();
    }
    if (missing.includes('order')) {
      f.order = await prompter.input({ message: 'Order number (shown on the card as the reference):', validate: required('the order number') });
      if (f.bonus) await knownIds();
    }
    if (missing.includes('amount')) {
      f.amount = await prompter.input({
        message: `Amount in ${currency}, e.g. 25.00:`,
        validate: (v) => {
          try {
            if (parseAmount(v) <= ceiling.maxCents || ceiling.allowLarge) return true;
            // Asked again at once, rather than refused after every other question.
            return `above this profile's ceiling (setting max-amount: ${formatMoney(ceiling.maxCents, currency)}); if the amount is right, run again with --allow-large`;
          } catch (error) {
            return error instanceof Error ? error.message.replace(/^Invalid --amount "[^"]*": /, '') : 'invalid amount';
          }
        },
      });
    }
    if (missing.includes('email')) f.email = await prompter.input({ message: "Customer's e-mail (the card is sent there):", validate: emailProblem });
    if (missing.includes('name')) f.name = await prompter.input({ message: "Customer's name (as the e-mail greets them):", validate: required('the name') });
    if (f.customerId === undefined) {
      const id = await prompter.input({
        message: "Customer's storefront id, to add to their loyalty card (Enter to skip: a new card is created):",
        validate: (v) => (v.trim() ? answerProblem(v, 'the customer id') : true),
      });
      f.customerId = id.trim() || undefined;
    }
  }
  const email = (f.email as string).trim();
  if (!isEmail(email)) {
    throw new ValidationError(`Invalid --email "${safeLine(email)}": expected a valid e-mail address (the provider needs one to create a card).`, [
      { path: 'email', message: 'expected a valid e-mail address' },
    ]);
  }
  // A person who just typed the e-mail is there to answer about it, --yes or not.
  const ask = deps.canPrompt() && (!fields.yes || missing.includes('email'));
  f.email = await checkEmailDomain(email, deps, fields, ask);
  return f as TypedFields;
}

/**
 * An e-mail domain that looks misspelt is asked about when someone can answer (`ask`), else refused (exit 2:
 * the card would go to an address nobody reads); a dry run only warns; --email-confirmed takes it as typed.
 */
async function checkEmailDomain(email: string, deps: Deps, flags: IssueOptions, ask: boolean): Promise<string> {
  let current = email;
  for (;;) {
    const suggestion = suggestEmail(current);
    if (!suggestion || flags.emailConfirmed) return current;
    if (!ask && flags.dryRun) {
      deps.err(`Warning: the e-mail ${safeLine(current)} looks misspelt (did you mean ${suggestion}?); a real run is refused without --email-confirmed.\n`);
      return current;
    }
    if (!ask) {
      throw new UsageError(
        `The e-mail ${safeLine(current)} looks misspelt: did you mean ${suggestion}? Nothing was sent.`,
        `If ${suggestion} is meant, pass --email ${shellQuote(suggestion)}; if ${safeLine(current)} is right as typed, pass --email-confirmed as well.`,
      );
    }
    const prompter = await deps.prompter();
    const choice = await prompter.select({
      message: `The e-mail ${safeLine(current)} looks misspelt. Did you mean ${suggestion}?`,
      choices: [
        { name: `Use ${suggestion}`, value: 'suggested' },
        { name: `Keep ${safeLine(current)}`, value: 'keep' },
        { name: 'Type it again', value: 'retype' },
      ],
      default: 'suggested',
    });
    if (choice === 'suggested') return suggestion;
    if (choice === 'keep') return current;
    current = (await prompter.input({ message: "Customer's e-mail:", validate: emailProblem })).trim();
  }
}

/** The spell checker's common mail domains, plus example.com (the sandbox's and the docs'). */
const DOMAINS = [...POPULAR_DOMAINS, 'example.com'];

/** The address the customer probably meant, or undefined when the domain looks right. */
function suggestEmail(email: string): string | undefined {
  const domain = email.split('@').pop()?.toLowerCase();
  if (!domain || DOMAINS.includes(domain)) return undefined;
  const suggestion = spellCheck({ email, domains: DOMAINS, topLevelDomains: POPULAR_TLDS });
  return suggestion && suggestion.full.toLowerCase() !== email.toLowerCase() ? suggestion.full : undefined;
}

/** Shows the summary and asks; returns on yes, throws on no (exit 1, nothing recorded). */
async function confirmIssue(deps: Deps, prepared: PreparedIssue, summary: string): Promise<void> {
  if (!deps.canPrompt()) {
    throw new UsageError(
      'Issuing store credit moves money and needs a confirmation, but nobody can answer a prompt here.',
      'Pass --yes to issue, or --dry-run to see the requests first.',
    );
  }
  deps.err(`About to issue store credit:\n${summary}\n`);
  const { req } = prepared;
  const what = `${formatMoney(req.amountCents, req.currency)} to ${req.name} <${req.email}>`;
  const ok = await (await deps.prompter()).confirm({ message: `Issue ${what}?`, default: false });
  // CHOICE (docs/spec-choices.md#declined-confirmation): a plain sentence, exit 1 (130 is Ctrl-C), nothing recorded.
  if (!ok) throw new PlainExit('Nothing was issued.', ExitCode.declined);
}

/** Prints the requests a real run would send (stdout), or them as JSON, and how many earlier records would hold it. */
async function dryRun(deps: Deps, prepared: PreparedIssue, steps: DryRunStep[], json: boolean): Promise<void> {
  const amount = formatMoney(prepared.req.amountCents, prepared.req.currency);
  if (json) {
    output.printJson(deps, {
      dryRun: true,
      firstPath: prepared.plan.first,
      amount: formatCents(prepared.req.amountCents),
      currency: prepared.req.currency,
      earlierIssuances: prepared.earlier,
      requests: steps,
    });
    return;
  }
  deps.err(`Dry run: nothing is sent and nothing is recorded. ${amount}; first path: ${describePath(prepared.plan.first)}.\n`);
  if (prepared.earlier)
    deps.err(
      `Note: the ledger holds ${prepared.earlier} earlier record(s) for ${prepared.what} or a similar credit; a real run would be held without --force.\n`,
    );
  for (const [i, step] of steps.entries()) {
    deps.out(`${i + 1}. ${step.when}\n   ${step.request.method} ${step.request.url}\n`);
    for (const [h, v] of Object.entries(step.request.headers)) deps.out(`   ${h}: ${v}\n`);
    if (step.request.body !== undefined) deps.out(`   ${JSON.stringify(step.request.body)}\n`);
  }
}

function maskCode(code: string): string {
  if (code.length <= 4) return '****';
  return `****${code.slice(-4)}`;
}

/** Prints the issued card (stdout) and the closing line (stderr); warnings are the caller's last word. */
async function issued(
  deps: Deps,
  prepared: PreparedIssue,
  result: ChainResult,
  options: { json: boolean; fields?: string[]; showCode: boolean },
): Promise<void> {
  const { req } = prepared;
  const { currency } = req;
  const code = options.showCode ? result.card.code : maskCode(result.card.code);
  if (!options.showCode) deps.redactor.add(result.card.code);
  if (options.json) {
    const record = {
      status: 'issued',
      issuance: req.issuance,
      claimId: req.claimId ?? null,
      orderNumber: req.orderNumber,
      bonus: req.bonus,
      amount: formatCents(req.amountCents),
      currency,
      customer: { email: req.email, name: req.name, customerId: req.customerId ?? null },
      profile: prepared.profile.name,
      path: result.path,
      pathDescription: describePath(result.path),
      fellBackFromTrigger: result.fellBack,
      triggerPosted: result.triggerPosted,
      cardId: result.card.gift_card_id,
      balance: formatCents(result.balanceCents),
      code,
      expiresOn: result.card.expires_on ?? null,
      possibleDoubleCredit: result.possibleDoubleCredit,
      warnings: result.warnings,
      notes: result.notes,
    } satisfies Record<(typeof ISSUED_FIELDS)[number], unknown>;
    output.printJson(deps, pickFields(record, options.fields));
    return;
  }
  for (const note of result.notes) deps.err(`Note: ${note}\n`);
  await output.printRecord(
    deps,
    [
      ['Path', describePath(result.path)],
      ['Card', result.card.gift_card_id],
      ['Balance', formatMoney(result.balanceCents, currency)],
      ['Code', code],
      ['Amount', formatMoney(req.amountCents, currency)],
      ['Issuance', req.issuance],
      ...(result.possibleDoubleCredit ? ([['Warning', 'possible double credit (see below)']] as [string, unknown][]) : []),
    ],
    output.outputMode(deps, {}),
  );
  deps.err(`Issued ${formatMoney(req.amountCents, currency)} for ${prepared.what} to ${req.name} <${req.email}>; recorded in the ledger.\n`);
}
