/** What `giftcard issue` shows: the summary to confirm, the dry run, and the issued card. */
import type { Deps } from '../../cli/deps.js';
import { type ChainResult, describePath, type DryRunStep } from '../../giftcard/chain.js';
import { maskCode } from '../../giftcard/format.js';
import { formatCents, formatMoney } from '../../giftcard/money.js';
import * as output from '../../core/output.js';
import type { PreparedIssue } from '../../giftcard/issuance.js';
import { safeLine } from '../../text/safe.js';
import type { ISSUED_FIELDS } from './issue-flags.js';
import { pickFields } from '../../core/json-fields.js';

/** Aligned "Label  value" lines, indented. */
export function summary(lines: [string, string][]): string {
  const width = Math.max(...lines.map(([label]) => label.length));
  return lines.map(([label, value]) => `  ${label.padEnd(width)}  ${safeLine(value)}`).join('\n');
}

/** Prints the requests a real run would send (stdout), or them as JSON. */
export async function dryRun(deps: Deps, prepared: PreparedIssue, plan: { steps: DryRunStep[]; earlier: number }, json: boolean): Promise<void> {
  const amount = formatMoney(prepared.req.amountCents, prepared.currency);
  if (json) {
    output.printJson(deps, {
      dryRun: true,
      firstPath: prepared.plan.first,
      amount: formatCents(prepared.req.amountCents),
      currency: prepared.currency,
      earlierIssuances: plan.earlier,
      requests: plan.steps,
    });
    return;
  }
  deps.err(`Dry run: nothing is sent and nothing is recorded. ${amount}; first path: ${describePath(prepared.plan.first)}.\n`);
  if (plan.earlier)
    deps.err(`Note: the ledger holds ${plan.earlier} earlier record(s) for ${prepared.what} or a similar credit; a real run would be held without --force.\n`);
  for (const [i, step] of plan.steps.entries()) {
    deps.out(`${i + 1}. ${step.when}\n   ${step.request.method} ${step.request.url}\n`);
    for (const [h, v] of Object.entries(step.request.headers)) deps.out(`   ${h}: ${v}\n`);
    if (step.request.body !== undefined) deps.out(`   ${JSON.stringify(step.request.body)}\n`);
  }
}

/** Prints the issued card (stdout) and the closing line (stderr); warnings are the caller's last word. */
export async function issued(
  deps: Deps,
  prepared: PreparedIssue,
  result: ChainResult,
  options: { json: boolean; fields?: string[]; showCode: boolean },
): Promise<void> {
  const { req, currency } = prepared;
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
