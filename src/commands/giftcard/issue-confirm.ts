/** The confirmation of `giftcard issue`: asked on a terminal, and where nobody can answer, a usage error naming --yes. */
import type { Deps } from '../../cli/deps.js';
import { ExitCode, PlainExit, UsageError } from '../../core/errors.js';
import type { PreparedIssue } from '../../giftcard/issuance.js';
import { formatMoney } from '../../giftcard/money.js';

/** Shows the summary and asks; returns on yes, throws on no (exit 1, nothing recorded). */
export async function confirmIssue(deps: Deps, prepared: PreparedIssue, summary: string): Promise<void> {
  if (!deps.canPrompt()) {
    throw new UsageError(
      'Issuing store credit moves money and needs a confirmation, but nobody can answer a prompt here.',
      'Pass --yes to issue, or --dry-run to see the requests first.',
    );
  }
  deps.err(`About to issue store credit:\n${summary}\n`);
  const { req } = prepared;
  const what = `${formatMoney(req.amountCents, prepared.currency)} to ${req.name} <${req.email}>`;
  const ok = await (await deps.prompter()).confirm({ message: `Issue ${what}?`, default: false });
  // CHOICE (docs/spec-choices.md#declined-confirmation): a plain sentence, exit 1 (130 is Ctrl-C), nothing recorded.
  if (!ok) throw new PlainExit('Nothing was issued.', ExitCode.declined);
}
