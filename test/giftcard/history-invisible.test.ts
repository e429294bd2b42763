/** `giftcard history` shows a claim id holding U+202E and U+200B escaped, and --json keeps it exact (issue 27, item 5). */
import { describe, expect, it } from 'vitest';
import { aliceClaim, type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

const RAW = /[\u202a-\u202e\u2066-\u2069\u200b-\u200f]/u;

describe('giftcard history', () => {
  it('a claim id with a right-to-left override and a zero-width space: escaped in the table and on a pipe, exact in --json', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const claim = 'C-\u202e03\u200b';
    const issued = await fx.run(aliceClaim(claim));
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stderr).not.toMatch(RAW);
    const pipe = await fx.run(['giftcard', 'history']);
    expect(pipe.code, pipe.stderr).toBe(0);
    expect(pipe.stdout).toContain('\tclaim C-\\u202e03\\u200b\t');
    expect(pipe.stdout).not.toMatch(RAW);
    const table = await fx.run(['giftcard', 'history'], { tty: true, env: { COLUMNS: '200', NO_COLOR: '1' } });
    expect(table.stdout).toContain('claim C-\\u202e03\\u200b');
    expect(table.stdout).not.toMatch(RAW);
    const json = await fx.run(['giftcard', 'history', '--json']);
    expect(JSON.parse(json.stdout).issuances[0].claimId).toBe(claim);
  });
});
