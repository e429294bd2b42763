import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import type { TourStep } from './tour.js';

/** The customers of the batch: none is step 8's, so no row looks like the claim filed there. */
const BATCH_CUSTOMERS = ['Bob Baker', 'Carol Chen', 'Dave Diaz', 'Erin Evans', 'Frank Fox'];

/**
 * The batch's rows: the template's example row once per customer, with the customer's e-mail and
 * name and a price of its own; the third row's price is `badPrice` when given (a typo to fix).
 */
function batchCsv(templateCsv: string, badPrice?: string): string {
  const [header, example] = parse(templateCsv) as [string[], string[]];
  const at = (column: string) => header.indexOf(column);
  const rows = BATCH_CUSTOMERS.map((name, i) => {
    const [first, last] = name.split(' ') as [string, string];
    const row = [...example];
    row[at('customer.email')] = `${first.toLowerCase()}@example.com`;
    row[at('shippingAddress.firstName')] = first;
    row[at('shippingAddress.lastName')] = last;
    row[at('item.details')] = `Batch row ${i + 1}`;
    row[at('item.price')] = i === 2 && badPrice !== undefined ? badPrice : `${101 + i}.00`;
    return row;
  });
  return stringify([header, ...rows]);
}

/** Tour steps of the claims commands: one claim, then a small journaled batch, fixed and resumed. */
export const steps: TourStep[] = [
  {
    title: 'File one warranty claim',
    async run(ctx) {
      ctx.say('`claims template --json` prints a complete example claim; flags override any of its fields.');
      const template = await ctx.run(['claims', 'template', '--json']);
      const path = join(ctx.configDir, 'claim.json');
      writeFileSync(path, template.stdout);
      ctx.say('Missing or malformed fields are named before anything is sent:');
      await ctx.run(['claims', 'file', '--data', path, '--item-price', 'cheap'], { expectCode: 2 });
      ctx.say('Filed: stdout carries the sourceOrderId of the order created for the claim.');
      await ctx.run(['claims', 'file', '--data', path, '--resolution', 'STORE_CREDIT', '--issue-type', 'DAMAGED']);
    },
  },
  {
    title: 'File a batch from a spreadsheet, resumably',
    async run(ctx) {
      ctx.say(
        '`claims template --csv` prints the columns (the field paths) and an example row; the tour writes a row like it for each of five other customers to claims.csv, one with a typo in its price.',
      );
      const template = await ctx.run(['claims', 'template', '--csv']);
      const csv = join(ctx.configDir, 'claims.csv');
      writeFileSync(csv, batchCsv(template.stdout, 'n/a'));
      ctx.say('--validate-only reads every row and sends nothing: the bad row is named with its line and field.');
      await ctx.run(['claims', 'file', '--from', 'claims.csv', '--validate-only'], { expectCode: 3 });
      ctx.say(
        'Each row is journaled in claims.csv.journal.jsonl before it is sent; on a terminal a progress line runs on stderr. The four valid rows are filed; the bad one is not sent, so the run exits 3.',
      );
      const fileBatch = ['claims', 'file', '--from', 'claims.csv', '--concurrency', '2', '--out', 'results.csv'];
      await ctx.run(fileBatch, { expectCode: 3 });
      ctx.say(
        'The tour corrects the price on line 4. The same command again sends nothing twice: the four filed rows are skipped, and only the corrected row is sent.',
      );
      writeFileSync(csv, batchCsv(template.stdout));
      await ctx.run(fileBatch);
    },
  },
];
