import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { UsageError } from '../../errors.js';

export interface TemplateOptions {
  format: 'csv' | 'json' | 'jsonl';
}

/** Registers `claims template`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('template')
    .description('Print a CSV header and example row (or an example JSON claim) to start a batch from')
    .option('--csv', 'a CSV header of every field path and one example row (the default)')
    .option('--json', 'one example claim as a JSON object, for --data')
    .option('--jsonl', 'one example claim on one line, for a JSONL batch')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli claims template --csv > claims.csv      # open in a spreadsheet, one claim per row
  $ opcli claims template --json > claim.json     # edit, then: opcli claims file --data claim.json

Columns are field paths (customer.email, item.price, shippingAddress.zip, options.fromValet);
item.images and warranty.receiptImages take URLs separated by ";" or a JSON array.`,
    )
    .action(async (flags: { csv?: boolean; json?: boolean; jsonl?: boolean }) => {
      const picked = (['csv', 'json', 'jsonl'] as const).filter((f) => flags[f]);
      if (picked.length > 1) throw new UsageError('Pick one of --csv, --json and --jsonl.');
      await run({ format: picked[0] ?? 'csv' }, deps);
    });
}

/** Prints the template; storeId is the profile's store when one is set. */
export async function run(opts: TemplateOptions, deps: Deps): Promise<void> {
  const [{ exampleClaim }, { CLAIM_FIELDS, flattenClaim }] = await Promise.all([import('../../claims/example.js'), import('../../claims/fields.js')]);
  const storeId = (await deps.profile().catch(() => undefined))?.storeId ?? 'your-store-id';
  const claim = exampleClaim(storeId);
  if (opts.format === 'json') {
    deps.out(`${JSON.stringify(claim, null, 2)}\n`);
    return;
  }
  if (opts.format === 'jsonl') {
    deps.out(`${JSON.stringify(claim)}\n`);
    return;
  }
  const { stringify } = await import('csv-stringify/sync');
  const flat = flattenClaim(claim);
  const header = CLAIM_FIELDS.map((f) => f.key);
  deps.out(stringify([header, header.map((k) => flat[k] ?? '')]));
}
