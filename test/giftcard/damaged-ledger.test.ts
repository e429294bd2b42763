/**
 * A ledger line opcli cannot read stops money: a newer format, NUL bytes after a crash, garbage
 * mid-file, a line cut short that is not the last one. Only a torn last line is set aside, and its
 * claim then counts as uncertain. Each case asserts what the provider received: nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { scriptedPrompter } from '../helpers.js';
import { type Fixture, fixture, giftcardSuite, aliceClaim } from './fixture.js';

giftcardSuite();

/** A credit for Alice; each claim its own amount, so none is held as similar to another. */
function issue(claim: string, extra: string[] = [], amount = `${30 + (Number(claim.replace(/\D/g, '')) % 50)}.00`): string[] {
  return aliceClaim(claim, extra, amount);
}

/** A ledger holding one paid claim (C-900), as opcli wrote it, and its path. */
async function paidLedger(): Promise<{ f: Fixture; path: string; text: string }> {
  const f = await fixture({ unset: ['trigger-id'] });
  const r = await f.run(issue('C-900', [], '25.00'));
  expect(r.code, r.stderr).toBe(0);
  f.sandbox.resetLog();
  const path = join(f.dir, LEDGER_FILE);
  return { f, path, text: readFileSync(path, 'utf8') };
}

/** An attempt line of claim `claim` as opcli writes it. */
function attemptLine(f: Fixture, claim: string): string {
  const line = readFileSync(join(f.dir, LEDGER_FILE), 'utf8').split('\n')[0] as string;
  return line
    .replaceAll('C-900', claim)
    .replaceAll('c-900', claim.toLowerCase())
    .replace(/"issuance":"[^"]+"/, `"issuance":"torn-${claim}"`);
}

describe('a damaged ledger stops giftcard issue before anything is sent', () => {
  const cases: [string, (text: string, f: Fixture) => string, RegExp, number][] = [
    [
      'a line of a newer format version',
      (text) => `${text}${JSON.stringify({ v: 2, issuance: 'x', key: 'k', type: 'attempt', what: 'new' })}\n`,
      /line 3 was written by a newer version of opcli \(format 2\)/,
      3,
    ],
    ['NUL bytes after a crash', (text) => `${text}\u0000\u0000\u0000\u0000\u0000\u0000`, /line 3 holds NUL bytes/, 3],
    ['NUL bytes inside a line', (text) => text.replace('"type":"outcome"', '"type":"out\u0000\u0000e"'), /line 2 holds NUL bytes/, 2],
    ['garbage mid-file', (text) => text.replace('\n', '\nthis is not a record\n'), /line 2 is not a record opcli can read/, 2],
    [
      'a line cut short that is not the last one',
      (text, f) => `${text}${attemptLine(f, 'C-901').slice(0, 120)}\n${text.split('\n')[0]}\n`,
      /line 3 is not a record opcli can read/,
      3,
    ],
    ['a torn last line that names no claim', (text) => `${text}{"v":1,"issu`, /line 3 is not a record opcli can read/, 3],
  ];

  it.each(cases)('%s: exit 2, naming the file, the line and the repair; the provider receives nothing', async (_name, damage, said, line) => {
    const { f, path, text } = await paidLedger();
    const damaged = damage(text, f);
    writeFileSync(path, damaged, { mode: 0o600 });
    for (const argv of [issue('C-910'), issue('C-910', ['--dry-run']), issue('C-900', ['--force'])]) {
      const r = await f.run(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toContain(`The gift card ledger ${path} cannot be read: `);
      expect(r.stderr).toMatch(said);
      expect(r.stderr).toMatch(/Nothing was sent/);
      expect(r.stderr).toMatch(line === 3 && /newer/.test(said.source) ? /Upgrade opcli/ : /opcli giftcard repair/);
      expect(r.stderr).not.toMatch(/unexpected failure|at .*\.ts:\d+/);
    }
    expect(f.sandbox.requests).toHaveLength(0);
    expect(f.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
    expect(readFileSync(path, 'utf8')).toBe(damaged);
    // history still shows what it can, and says which line it skipped.
    const history = await f.run(['giftcard', 'history']);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/claim C-900/);
    expect(history.stderr).toMatch(said);
  });
});

describe('a torn last line (an interrupted write)', () => {
  it('is set aside: its claim counts as uncertain and is held (exit 3, nothing sent), other claims are paid, and it stays uncertain', async () => {
    const { f, path, text } = await paidLedger();
    const torn = attemptLine(f, 'C-920').slice(0, 140);
    writeFileSync(path, `${text}${torn}`, { mode: 0o600 });

    const held = await f.run(issue('c\u2010920'));
    expect(held.code).toBe(3);
    expect(held.stderr).toMatch(
      /Line 3 of the gift card ledger .* was cut short by an interrupted write; it names claim c‐920: that attempt may have paid, so it counts as uncertain\. Nothing was sent\./,
    );
    expect(held.stderr).toMatch(/Check the customer's card at the provider/);
    expect(f.sandbox.requests).toHaveLength(0);

    const other = await f.run(issue('C-921'));
    expect(other.code, other.stderr).toBe(0);
    expect(f.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
    // The torn line is ended and set aside by a record naming it, so it never turns into garbage mid-file.
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines[2]).toBe(torn);
    expect(JSON.parse(lines[3] as string)).toMatchObject({ type: 'set-aside', line: 3, issuance: 'torn-C-920', key: expect.stringMatching(/\|claim:c-920$/) });

    f.sandbox.resetLog();
    const still = await f.run(issue('C-920'));
    expect(still.code).toBe(3);
    expect(still.stderr).toMatch(/Line 3 of the gift card ledger .* cut short/);
    expect(f.sandbox.requests).toHaveLength(0);
    const history = await f.run(['giftcard', 'history']);
    expect(history.stderr).toMatch(/line 3 was cut short by an interrupted write.*counts as uncertain/);

    const forced = await f.run(issue('C-920', ['--force']));
    expect(forced.code, forced.stderr).toBe(0);
  });
});

describe('giftcard repair', () => {
  it('sets damaged lines aside in place, keeps the damaged file, and money moves again; a claim a line still names stays held', async () => {
    const { f, path, text } = await paidLedger();
    // A line cut short mid-file (it names C-930), then NUL bytes at the end, as a crash leaves them.
    const damaged = `${text}${attemptLine(f, 'C-930').slice(0, 130)}\n${text.split('\n')[1]}\n\u0000\u0000\u0000\u0000`;
    writeFileSync(path, damaged, { mode: 0o600 });

    const unconfirmed = await f.run(['giftcard', 'repair']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/line 3 is not a record opcli can read; it names claim:c-930, which stays held as uncertain/);
    expect(unconfirmed.stderr).toMatch(/line 5 holds NUL bytes/);
    expect(unconfirmed.stderr).toMatch(/Pass --yes to repair/);
    expect(readFileSync(path, 'utf8')).toBe(damaged);

    // Answering no on a terminal: a plain sentence, exit 1 (130 is Ctrl-C), the file untouched.
    const declined = await f.run(['giftcard', 'repair'], { tty: true, prompter: scriptedPrompter({ 'Have you checked the payments': false }) });
    expect(declined.code).toBe(1);
    expect(declined.stderr.trimEnd().split('\n').at(-1)).toBe('Nothing was changed.');
    expect(declined.stderr).not.toMatch(/Error|Cancelled/);
    expect(readFileSync(path, 'utf8')).toBe(damaged);

    const r = await f.run(['giftcard', 'repair', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const done = JSON.parse(r.stdout);
    // Line 4 is a copy of line 2: it does not follow line 3 (src/record/chain.ts), so it is set aside too.
    expect(done.lines.map((l: { line: number; kind: string }) => `${l.line}:${l.kind}`)).toEqual(['3:garbage', '4:chain', '5:nul']);
    expect(readFileSync(done.copy, 'utf8')).toBe(damaged);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(JSON.parse(lines[2] as string)).toMatchObject({ type: 'set-aside', line: 3, key: expect.stringMatching(/\|claim:c-930$/) });
    expect(JSON.parse(lines[4] as string)).toMatchObject({ type: 'set-aside', line: 5, key: 'unknown' });

    expect((await f.run(issue('C-931'))).code).toBe(0);
    const held = await f.run(issue('C-930'));
    expect(held.code).toBe(3);
    expect(held.stderr).toMatch(
      /Line 3 of the gift card ledger .* was set aside by `opcli giftcard repair` \(is not a record opcli can read\); it names claim C-930/,
    );
    expect(f.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
    expect((await f.run(['giftcard', 'repair', '--yes'])).stderr).toMatch(/has no damaged line: nothing to repair/);
  });

  it('does not set aside a line of a newer opcli: exit 2, upgrade, the file unchanged', async () => {
    const { f, path, text } = await paidLedger();
    const damaged = `${text}${JSON.stringify({ v: 2, issuance: 'x', key: 'k', type: 'attempt' })}\n`;
    writeFileSync(path, damaged, { mode: 0o600 });
    const r = await f.run(['giftcard', 'repair', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line\(s\) 3 written by a newer version of opcli/);
    expect(r.stderr).toMatch(/Upgrade opcli/);
    expect(readFileSync(path, 'utf8')).toBe(damaged);
  });
});
