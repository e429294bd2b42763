import type { TourStep } from './tour.js';

/** Tour steps of the orders, variants, session and api commands (run after login). */
export const steps: TourStep[] = [
  {
    title: 'List orders: one page, then across pages up to a --limit',
    async run(ctx) {
      ctx.say('One page: a table on a terminal, tab-separated lines in a pipe; the footer shows the next command.');
      await ctx.run(['orders', 'list', '--size', '5']);
      ctx.say(
        '--all follows the cursors, showing its progress (a line on a terminal, a sentence every 10 s in a log); --limit stops after N orders (here 3, 2 a page). --jsonl and --csv stream every field.',
      );
      await ctx.run(['orders', 'list', '--limit', '3', '--size', '2', '--columns', 'sourceOrderId,currency,total,customerEmail']);
    },
  },
  {
    title: 'Update an order: validated, and every field not given is kept',
    async run(ctx) {
      ctx.say('A currency outside the spec list is refused with the closest codes; nothing is sent.');
      await ctx.run(['orders', 'update', 'ord_000001', '--currency', 'USX'], { expectCode: 2 });
      ctx.say('The API replaces the whole order, so opcli reads the current record, changes the fields given and sends it whole. --dry-run shows the diff.');
      await ctx.run(['orders', 'update', 'ord_000001', '--total', '42.50', '--dry-run']);
      await ctx.run(['orders', 'update', 'ord_000001', '--total', '42.50', '--policy-cancelled-at', 'null']);
      await ctx.run(['api', 'GET', '/v1/orders', '--query', 'size=1']);
    },
  },
  {
    title: 'Create a product variant',
    async run(ctx) {
      await ctx.run([
        'variants',
        'create',
        'prod_mug',
        '--status',
        'ACTIVE',
        '--name',
        'Mug, blue',
        '--price',
        '12.50',
        '--inventory-quantity',
        '40',
        '--product-type',
        'SIMPLE',
        '--inventory-type',
        'SIMPLE',
        '--in-stock',
      ]);
    },
  },
  {
    title: 'Verify an embedded-app session token',
    async run(ctx) {
      ctx.say('The dashboard hands the app a 60-second, single-use token; the tour mints one as the dashboard would.');
      const token = ctx.sandbox.mintSessionToken();
      await ctx.run(['session', 'verify', '--stdin'], { stdin: token });
      ctx.say('The same token a second time is refused: the app should create its own session after the first check.');
      await ctx.run(['session', 'verify', '--stdin'], { stdin: token, expectCode: 1 });
    },
  },
];
