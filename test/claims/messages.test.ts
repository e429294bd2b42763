/**
 * A bad field reads the same wherever a person meets it: a batch row, a flag of `claims file`, the
 * answer to a prompt. Each property draws a field of the claim schema and a bad value of one kind,
 * runs the three real commands, and compares the messages they print.
 */
import { join } from 'node:path';
import { fc } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { CLAIM_FIELDS, type ClaimField } from '../../src/claims/fields.js';
import type { Prompter } from '../../src/cli/deps.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, row, writeCsv } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

const field = (key: string) => CLAIM_FIELDS.find((f) => f.key === key) as ClaimField;
const escapeRe = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The message printed for `f` in an error's field list ("  customer.email: …" or "  --customer-email: …"). */
function messageFor(stderr: string, f: ClaimField): string | undefined {
  const m = new RegExp(`^ {2}(?:${escapeRe(f.key)}|--${escapeRe(f.flag)}): (.*)$`, 'm').exec(stderr);
  return m?.[1];
}

/** A valid claim's flags but `skip`'s (switches and the profile's store left out). */
function flagsBut(skip: ClaimField): string[] {
  const values = row(1);
  const out: string[] = [];
  for (const f of CLAIM_FIELDS) {
    const value = values[f.key as keyof typeof values];
    if (f === skip || value === undefined || f.type === 'boolean' || (value === '' && !f.required)) continue;
    out.push(`--${f.flag}`, value);
  }
  return out;
}

/** The three sources' messages for `text` in field `f`; the prompt's only for a text prompt (enums are a list). */
async function threeSources(f: ClaimField, text: string): Promise<{ batch?: string; flag?: string; prompt?: string; asked?: string }> {
  const path = join(dir, 'one.csv');
  writeCsv(path, [row(1, { [f.key]: text })]);
  const batch = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
  expect(batch.code, batch.stderr).toBe(3);
  const flag = await runOpcli(['claims', 'file', ...flagsBut(f), `--${f.flag}`, text, '--dry-run'], { env: env() });
  expect(flag.code, flag.stderr).toBe(2);
  const result = { batch: messageFor(batch.stderr, f), flag: messageFor(flag.stderr, f) };
  if (f.type === 'enum') return result;
  let verdict: true | string = true;
  let asked = '';
  const prompter: Prompter = {
    input: async (q) => {
      asked = q.message;
      verdict = q.validate?.(text) ?? true;
      return text;
    },
    password: async () => '',
    confirm: async () => false,
    select: async () => {
      throw new Error('no list expected');
    },
  };
  const prompted = await runOpcli(['claims', 'file', ...flagsBut(f), '--dry-run'], { env: env(), tty: true, prompter });
  expect(prompted.code, prompted.stderr).toBe(2);
  return { ...result, prompt: typeof verdict === 'string' ? verdict : undefined, asked };
}

/** Required text fields a person types (not the signature, whose empty value is the spec's). */
const REQUIRED_TEXT = CLAIM_FIELDS.filter((f) => f.required && !f.acceptsEmpty && f.key !== 'storeId');
const ENUMS = CLAIM_FIELDS.filter((f) => f.type === 'enum' && f.required);

/** Each kind of bad value, with the fields it applies to. */
const KINDS: { kind: string; fields: ClaimField[]; value: fc.Arbitrary<string> }[] = [
  { kind: 'empty', fields: REQUIRED_TEXT, value: fc.constantFrom('', ' ', '   ') },
  {
    kind: 'not one of the values',
    fields: ENUMS,
    value: fc.stringMatching(/^[A-Z][A-Z_]{2,10}$/).filter((v) => !ENUMS.some((f) => f.values?.includes(v))),
  },
  { kind: 'not a number', fields: [field('item.price')], value: fc.constantFrom('cheap', '12,50', '$5', '1.2.3', 'ten') },
  { kind: 'below zero', fields: [field('item.price')], value: fc.integer({ min: 1, max: 10_000 }).map((n) => `-${n}`) },
  {
    kind: 'a date that does not exist',
    fields: [field('warranty.dateOfPurchase')],
    value: fc
      .record({ y: fc.integer({ min: 2001, max: 2030 }), m: fc.constantFrom(2, 4, 6, 9, 11), d: fc.constant(31) })
      .map(({ y, m, d }) => `${y}-${String(m).padStart(2, '0')}-${d}T10:00:00Z`),
  },
  // A date alone (2024-05-01) is a date-time's day (issue 43); one without its zone, or in day/month order, is not.
  {
    kind: 'not a date-time',
    fields: [field('warranty.dateOfPurchase')],
    value: fc.constantFrom('yesterday', '2024-05-01 10:00', '01/05/2024 10:00', '05/01/2024', '2024-02-30'),
  },
  { kind: 'not an e-mail address', fields: [field('customer.email')], value: fc.stringMatching(/^[a-z]{1,8}(\.[a-z]{1,5})?$/) },
  { kind: 'not a duration', fields: [field('warranty.warrantyPeriod')], value: fc.constantFrom('one year', '12 months', 'P', '1Y') },
];

describe('one message for a bad field, wherever it is typed', () => {
  for (const { kind, fields, value } of KINDS) {
    it(`${kind}: a batch row, a flag and a prompt say the same`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...fields), value, async (f, text) => {
          const said = await threeSources(f, text);
          expect(said.batch, `${f.key} ${JSON.stringify(text)}`).toBeDefined();
          expect(said.flag).toBe(said.batch);
          if (f.type !== 'enum') expect(said.prompt).toBe(said.batch);
        }),
        { numRuns: 6 },
      );
      expect(claimBodies(sandbox)).toHaveLength(0);
    });
  }

  it('the messages name the problem in plain words', async () => {
    const email = await threeSources(field('customer.email'), '');
    expect(email.batch).toBe('missing (required: an e-mail address such as alice@example.com)');
    expect(email.asked).toBe('Customer email (an e-mail address such as alice@example.com):');
    const issue = await threeSources(field('issueType'), '');
    expect(issue.batch).toMatch(/^missing \(required: one of STOLEN, /);
    const date = await threeSources(field('warranty.dateOfPurchase'), '2024-02-30T10:00:00Z');
    expect(date.batch).toBe('"2024-02-30T10:00:00Z" is not a date that exists: February 2024 has 29 days');
    expect(date.prompt).toBe(date.batch);
    expect((await threeSources(field('warranty.dateOfPurchase'), '2024-13-01T10:00:00Z')).flag).toBe(
      '"2024-13-01T10:00:00Z" is not a date that exists: there is no month 13',
    );
  });
});

describe('a JSON row', () => {
  it('names the object a field belongs in, not zod\'s "expected object"', async () => {
    const claim = JSON.parse((await runOpcli(['claims', 'template', '--jsonl'], { env: env() })).stdout);
    const bad = { ...claim, customer: 'alice@example.com' };
    const r = await runOpcli(['claims', 'file', '--from', '-', '--format', 'jsonl', '--validate-only'], { env: env(), stdin: `${JSON.stringify(bad)}\n` });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('  customer: expected an object of fields (email, phoneNumber), got "alice@example.com"');
    expect(r.stderr).not.toContain('expected object');
  });
});

describe('a held row', () => {
  it('lists only the fields whose value changed, not one a spreadsheet wrote differently', async () => {
    const path = join(dir, 'claims.csv');
    writeCsv(path, [row(1, { 'shippingAddress.zip': '2903' })]);
    expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
    writeCsv(path, [row(1, { 'shippingAddress.zip': '02903', 'item.price': '50' })]);
    const again = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/line 2: looks like the claim filed from line 2 on \d{4}-\d{2}-\d{2} \(item\.price 49\.99 → 50\); not sent/);
    expect(again.stderr).not.toContain('shippingAddress.zip');
  });
});
