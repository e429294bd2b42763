/** `claims file` without --from: asks for what is missing on a terminal, files one claim, shows it. */
import type { FieldAsker, FieldFlags } from '../../claims/single.js';
import type { Deps } from '../../deps.js';
import { printJson } from '../../output.js';

/** Files one claim and prints its sourceOrderId (--json: the whole payload); a dry run prints the request. */
export async function fileOne(opts: { fields: FieldFlags; data?: string; dryRun: boolean; json: boolean }, deps: Deps): Promise<void> {
  const { fileSingle } = await import('../../claims/single.js');
  const result = await fileSingle({ fields: opts.fields, data: opts.data, dryRun: opts.dryRun }, deps, deps.canPrompt() ? asker(deps) : undefined);
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

/** The terminal's prompter, loaded when the first question comes. */
function asker(deps: Deps): FieldAsker {
  return {
    select: async (question) => (await deps.prompter()).select(question),
    input: async (question) => (await deps.prompter()).input(question),
  };
}
