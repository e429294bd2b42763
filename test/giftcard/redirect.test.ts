/** A gift card provider answering a redirect: named like every command names one, never followed, never paid twice. */
import { describe, expect, it } from 'vitest';
import { scriptedServer } from '../orders/scripted.js';
import { type Fixture, fixture, giftcardSuite, ledgerLines } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

describe('giftcard issue: a provider that redirects', () => {
  it.each([
    [307, 'The request was not processed.', 'failed'],
    [302, 'The request may have been processed.', 'uncertain'],
  ])('%i to the card creation: the status and Location, nothing followed, the ledger says %s', async (status, fate, ledger) => {
    fx = await fixture({ fakeClock: true });
    const elsewhere = await scriptedServer([]);
    const gateway = await scriptedServer([{ status, body: '', headers: { location: `${elsewhere.url}/v2/gift-cards/issue/` } }]);
    try {
      // The provider token belongs to the URL it was given for: give it again for the gateway.
      const token = fx.sandbox.store.providerToken;
      expect((await fx.run(['giftcard', 'setup', '--api-url', gateway.url, '--token-stdin', '--no-check'], { stdin: token })).code).toBe(0);
      const r = await fx.run([
        'giftcard',
        'issue',
        '--claim',
        'C-300',
        '--order',
        '3',
        '--amount',
        '5',
        '--email',
        'bob@example.com',
        '--name',
        'Bob',
        '--yes',
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `POST /v2/gift-cards/issue/ answered ${status} (a redirect to ${elsewhere.url}/v2/gift-cards/issue/), not a success; opcli does not follow redirects. ${fate}`,
      );
      expect(gateway.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /v2/gift-cards/issue/']);
      expect(elsewhere.seen).toEqual([]);
      expect(ledgerLines(fx.dir).find((l) => l.type === 'outcome')).toMatchObject({ status: ledger });
    } finally {
      await gateway.close();
      await elsewhere.close();
    }
  });
});
