/** `giftcard setup --check` on screen: one row per check, and exit 1 when one failed. */
import type { Deps } from '../../cli/deps.js';
import { OpcliError } from '../../core/errors.js';
import { providerClient } from '../../giftcard/provider.js';
import { checkProvider } from '../../giftcard/setup.js';
import * as output from '../../core/output.js';

/** Tests the provider settings without issuing anything; exit 1 when a check fails. */
export async function check(json: boolean, deps: Deps): Promise<void> {
  const { client, settings } = await providerClient(deps, 10_000);
  const { baseUrl } = await deps.profile();
  const { rows, firstPath } = await checkProvider(client, settings, baseUrl);
  const failed = rows.filter((r) => r.result === 'failed');
  if (json) output.printJson(deps, { ok: failed.length === 0, firstPath, checks: rows });
  else {
    await output.printTable(
      deps,
      [
        { header: 'CHECK', value: (r) => r.check },
        { header: 'RESULT', value: (r) => r.result },
        // Wrapped, never cut: the error below points to these details.
        { header: 'DETAIL', value: (r) => r.detail, wrap: true },
      ],
      rows,
      output.outputMode(deps, {}),
    );
    deps.err(`First path for a customer with a known id: ${firstPath}.\n`);
  }
  if (failed.length)
    throw new OpcliError(`${failed.length} provider check(s) failed: ${failed.map((f) => f.check).join(', ')}.`, {
      hint: 'See the details above: each says what can cause it and what to do.',
    });
}
