import type { TourStep } from './tour.js';

/** Tour steps of the giftcard commands: check the provider, issue credit for a claim through the trigger, show the ledger. */
export const steps: TourStep[] = [
  {
    title: 'Check the gift card provider settings',
    async run(ctx) {
      ctx.say('`giftcard setup --check` tests the token and the store domain with a harmless lookup; it issues nothing.');
      await ctx.run(['giftcard', 'setup', '--check']);
    },
  },
  {
    title: 'Issue store credit for a claim, exactly once',
    async run(ctx) {
      ctx.say('A claim resolved with store credit: the trigger workflow is tried first, and the loyalty card is polled until it grew by the amount.');
      const claim = ['giftcard', 'issue', '--claim', 'CLM-1001', '--order', '1001', '--amount', '25.00'];
      const customer = ['--email', 'alice@example.com', '--name', 'Alice Example', '--customer-id', 'cust_1001'];
      await ctx.run([...claim, ...customer, '--dry-run']);
      await ctx.run([...claim, ...customer, '--yes']);
      ctx.say('The same claim again is refused: the ledger shows the earlier issuance.');
      await ctx.run([...claim, ...customer, '--yes'], { expectCode: 3 });
    },
  },
  {
    title: 'The ledger of issuances',
    async run(ctx) {
      ctx.say('Every attempt and outcome is on record, with the OS user who ran it.');
      await ctx.run(['giftcard', 'history']);
    },
  },
];
