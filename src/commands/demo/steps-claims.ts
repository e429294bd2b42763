import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TourStep } from './tour.js';

/** Tour steps of the claims commands: one claim, then a small journaled batch with its progress line. */
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
        '`claims template --csv` prints the columns (the field paths) and an example row; the tour writes five rows like it to claims.csv, one of them with a bad price.',
      );
      const template = await ctx.run(['claims', 'template', '--csv']);
      const [header, example] = template.stdout.trimEnd().split('\n') as [string, string];
      const rows = [1, 2, 3, 4, 5].map((i) =>
        example.replace('Pump stopped working after 3 months', `Batch row ${i}`).replace('249.99', i === 3 ? 'n/a' : `${100 + i}.00`),
      );
      const csv = join(ctx.configDir, 'claims.csv');
      writeFileSync(csv, `${header}\n${rows.join('\n')}\n`);
      ctx.say('--validate-only reads every row and sends nothing: the bad row is named with its line and field.');
      await ctx.run(['claims', 'file', '--from', 'claims.csv', '--validate-only'], { expectCode: 3 });
      ctx.say('Each row is journaled in claims.csv.journal.jsonl before it is sent; on a terminal a progress line runs on stderr.');
      await ctx.run(['claims', 'file', '--from', 'claims.csv', '--concurrency', '2', '--out', 'results.csv'], { expectCode: 3 });
      ctx.say('The same command again sends nothing twice: filed rows are skipped, the invalid row is reported again.');
      await ctx.run(['claims', 'file', '--from', 'claims.csv'], { expectCode: 3 });
    },
  },
];
