import type { Command } from 'commander';
import { stringify } from 'csv-stringify/sync';
import { CLAIM_FIELDS, flattenClaim } from '../../claims/fields.js';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import type { OfflineClaim } from '../../schemas.js';

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

/** A complete, valid claim for `storeId`: the template's example row, and the shape the fuzz tests start from. */
export function exampleClaim(storeId: string): OfflineClaim {
  return {
    customer: { email: 'alice@example.com', phoneNumber: '+1 555 0100' },
    item: {
      name: 'Espresso machine, stainless',
      price: 249.99,
      sku: 'ESP-200',
      sourceProductId: 'prod_200',
      details: 'Pump stopped working after 3 months',
      images: ['https://example.com/claims/espresso-1.jpg', 'https://example.com/claims/espresso-2.jpg'],
    },
    warranty: { dateOfPurchase: '2024-05-01T10:00:00Z', warrantyPeriod: 'P1Y', receiptRequired: true },
    shippingAddress: {
      firstName: 'Alice',
      lastName: 'Example',
      address1: '1 Main St',
      address2: 'Apt 4',
      city: 'Springfield',
      state: 'Illinois',
      stateAbr: 'IL',
      zip: '62701',
      country: 'United States',
      countryAbr: 'US',
    },
    storeId,
    signature: '',
    salesChannel: 'IN_STORE',
    claimCategory: 'WARRANTY',
    issueType: 'DEFECTIVE_ITEM',
    resolution: 'RESHIP',
    claimFiledFrom: 'EXTERNAL',
    options: { fromValet: false, requireCustomerSignature: false },
  };
}
