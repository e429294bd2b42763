import type { Command } from 'commander';
import { stringify } from 'csv-stringify/sync';
import { exampleClaim } from '../../claims/example.js';
import { CLAIM_FIELDS, flattenClaim } from '../../claims/fields.js';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';

interface TemplateOptions {
  format: 'csv' | 'json' | 'jsonl';
}

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
item.images and warranty.receiptImages take URLs separated by ";" or a JSON array.

Open the CSV in a spreadsheet with every column as text, or it changes values on the way: zip
02139 becomes 2139, a long id becomes 1.23456789012346E+19 (its digits lost), SEP-12 a date.
  LibreOffice Calc: File > Open, pick the file; in Text Import select every column (click the
    top-left corner) and set "Column type" to Text.
  Excel: Data > From Text/CSV, then Transform Data, select all columns, Data Type: Text
    (or the legacy Text Import Wizard, step 3: Column data format "Text" for every column).
  Google Sheets: File > Import, and untick "Convert text to numbers, dates, and formulas".
A cell a spreadsheet visibly damaged (scientific notation in an id, a date in a code column) makes
its row invalid, because the original value is gone.`,
    )
    .action(async (flags: { csv?: boolean; json?: boolean; jsonl?: boolean }) => {
      const picked = (['csv', 'json', 'jsonl'] as const).filter((f) => flags[f]);
      if (picked.length > 1) throw new UsageError('Pick one of --csv, --json and --jsonl.');
      await run({ format: picked[0] ?? 'csv' }, deps);
    });
}

/** Prints the template; storeId is the profile's store when one is set. */
export async function run(opts: TemplateOptions, deps: Deps): Promise<void> {
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
  const flat = flattenClaim(claim);
  const header = CLAIM_FIELDS.map((f) => f.key);
  deps.out(stringify([header, header.map((k) => flat[k] ?? '')]));
}
