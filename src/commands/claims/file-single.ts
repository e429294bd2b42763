/** `claims file` without --from: asks for what is missing on a terminal, files one claim, shows it. */
import { flattenClaim } from '../../claims/fields.js';
import { type AskField, type FieldFlags, fileSingle } from '../../claims/single.js';
import type { Deps } from '../../cli/deps.js';
import type { OfflineClaim } from '../../schemas.js';
import { printJson } from '../../core/output.js';
import { safeLine } from '../../text/safe.js';

/** Files one claim and prints its sourceOrderId (--json: the whole payload); a dry run prints the request. */
export async function fileOne(
  opts: { fields: FieldFlags; data?: string; dryRun: boolean; json: boolean; force: boolean; yes: boolean },
  deps: Deps,
): Promise<void> {
  // CHOICE (docs/spec-choices.md#confirming-a-claim): on a terminal the claim is shown and confirmed (default No); --yes skips it, and no script is asked.
  const confirm = deps.canPrompt() && !opts.yes ? (claim: OfflineClaim) => confirmClaim(claim, deps) : undefined;
  const result = await fileSingle(
    { fields: opts.fields, data: opts.data, dryRun: opts.dryRun, force: opts.force, confirm },
    deps,
    deps.canPrompt() ? askField(deps) : undefined,
  );
  if (result.kind === 'dry-run') {
    if (opts.json) printJson(deps, { method: 'POST', url: result.url, body: result.body });
    else deps.out(`POST ${result.url}\ncontent-type: application/json\n\n${JSON.stringify(result.body, null, 2)}\n`);
    deps.err('Dry run: nothing was sent.\n');
    return;
  }
  if (opts.json) printJson(deps, result.payload);
  else {
    deps.out(`${result.payload.sourceOrderId}\n`);
    deps.err(`Filed the claim; order ${result.payload.sourceOrderId} was created for it.\n`);
  }
}

/** Shows the claim about to be filed on stderr and asks to file it (default No). */
async function confirmClaim(claim: OfflineClaim, deps: Deps): Promise<boolean> {
  const fields = Object.entries(flattenClaim(claim));
  const width = Math.max(...fields.map(([k]) => k.length));
  deps.err(`The claim to file:\n${fields.map(([k, v]) => `  ${k.padEnd(width)}  ${safeLine(v)}`).join('\n')}\n`);
  return (await deps.prompter()).confirm({
    message: `File this claim for ${safeLine(claim.customer.email)} in store ${safeLine(claim.storeId)}?`,
    default: false,
  });
}

/** Puts a field's question to the terminal's prompter (loaded when the first question comes): a select list for a choice, else a line of text. */
function askField(deps: Deps): AskField {
  return async (question) => ('choices' in question ? (await deps.prompter()).select(question) : (await deps.prompter()).input(question));
}
