import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli, scriptedPrompter } from '../helpers.js';
import { claimBodies, claimsSuite } from './fixtures.js';

const FLAGS = [
  '--customer-email',
  'alice@example.com',
  '--customer-phone',
  '+1 555 0100',
  '--item-name',
  'Kettle, 1.7 l',
  '--item-price',
  '49.99',
  '--item-image',
  'https://example.com/a.jpg',
  '--item-image',
  'https://example.com/b.jpg',
  '--warranty-date-of-purchase',
  '2024-05-01T10:00:00Z',
  '--warranty-period',
  'P1Y',
  '--shipping-first-name',
  'Alice',
  '--shipping-last-name',
  'Example',
  '--shipping-address1',
  '1 Main St',
  '--shipping-city',
  'Springfield',
  '--shipping-zip',
  '62701',
  '--shipping-country',
  'United States',
  '--shipping-lat',
  '39.78',
  '--signature',
  '',
  '--sales-channel',
  'IN_STORE',
  '--claim-category',
  'WARRANTY',
  '--issue-type',
  'DEFECTIVE_ITEM',
  '--resolution',
  'RESHIP',
  '--claim-filed-from',
  'INTERNAL',
  '--from-valet',
  '--no-require-customer-signature',
];

let sandbox: Sandbox;
let dir: string;
const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

describe('claims file (one claim)', () => {
  it('files a claim from flags, with types coerced and the store taken from the profile, and prints its sourceOrderId', async () => {
    const res = await runOpcli(['claims', 'file', ...FLAGS], { env: env() });
    expect(res.stderr).toContain('Filed the claim');
    expect(res.code).toBe(0);
    const bodies = claimBodies(sandbox);
    expect(bodies).toHaveLength(1);
    const sent = JSON.parse(bodies[0] as string);
    expect(sent).toMatchObject({
      customer: { email: 'alice@example.com', phoneNumber: '+1 555 0100' },
      item: { name: 'Kettle, 1.7 l', price: 49.99, images: ['https://example.com/a.jpg', 'https://example.com/b.jpg'] },
      shippingAddress: { lat: 39.78 },
      storeId: sandbox.store.storeId,
      signature: '',
      claimFiledFrom: 'INTERNAL',
      options: { fromValet: true, requireCustomerSignature: false },
    });
    const created = sandbox.claims.at(-1);
    expect(res.stdout).toBe(`${created?.sourceOrderId}\n`);
  });

  it('--json prints the whole payload', async () => {
    const res = await runOpcli(['claims', 'file', ...FLAGS, '--json'], { env: env() });
    expect(res.code).toBe(0);
    const payload = JSON.parse(res.stdout);
    expect(payload.sourceOrderId).toBe(sandbox.claims.at(-1)?.sourceOrderId);
    expect(payload.item.name).toBe('Kettle, 1.7 l');
    expect(payload).not.toHaveProperty('options');
  });

  it('reads --data from a file and lets flags override it', async () => {
    const template = await runOpcli(['claims', 'template', '--json'], { env: env() });
    expect(template.code).toBe(0);
    const path = join(dir, 'claim.json');
    writeFileSync(path, template.stdout);
    const res = await runOpcli(['claims', 'file', '--data', path, '--resolution', 'store_credit', '--item-price', '12.5'], { env: env() });
    expect(res.code).toBe(0);
    const sent = JSON.parse(claimBodies(sandbox)[0] as string);
    expect(sent.resolution).toBe('STORE_CREDIT');
    expect(sent.item.price).toBe(12.5);
    expect(sent.item.name).toBe(JSON.parse(template.stdout).item.name);
    expect(sent.storeId).toBe(sandbox.store.storeId);
  });

  it('reads --data - from standard input', async () => {
    const template = await runOpcli(['claims', 'template', '--jsonl'], { env: env() });
    const res = await runOpcli(['claims', 'file', '--data', '-', '--json'], { env: env(), stdin: template.stdout });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).customer.email).toBe('alice@example.com');
  });

  it('asks for missing required fields on a terminal: select lists for enums, text for the rest', async () => {
    const prompter = scriptedPrompter({
      'Customer email (': 'bob@example.com',
      'Item name (': 'Toaster',
      'Item price (': '19.90',
      'Warranty date of purchase (': '2024-02-03T04:05:06Z',
      'Warranty warranty period (': 'P6M',
      'Shipping address first name (': 'Bob',
      'Shipping address last name (': 'Builder',
      'Shipping address address1 (': '2 Side St',
      'Shipping address city (': 'Shelbyville',
      'Shipping address zip (': '12345',
      'Shipping address country (': 'US',
      'Signature (': '',
      'Sales channel:': 'ONLINE',
      'Claim category:': 'SHIPPING',
      'Issue type:': 'STOLEN',
      'Resolution:': 'REFUND',
      'File this claim': true,
    });
    const res = await runOpcli(['claims', 'file', '--item-sku', 'TS-1'], { env: env(), tty: true, prompter });
    expect(res.stderr).toContain('Filed the claim');
    expect(res.code).toBe(0);
    // storeId came from the profile, so it was not asked; the sku flag was not asked either; then the claim is confirmed.
    expect(prompter.asked.some((m) => m.includes('storeId'))).toBe(false);
    expect(prompter.asked).toHaveLength(17);
    const sent = JSON.parse(claimBodies(sandbox)[0] as string);
    expect(sent).toMatchObject({
      customer: { email: 'bob@example.com' },
      item: { name: 'Toaster', price: 19.9, sku: 'TS-1' },
      salesChannel: 'ONLINE',
      issueType: 'STOLEN',
    });
  });

  it('a prompt answer the schema refuses is an error naming the field; nothing is sent', async () => {
    const prompter = scriptedPrompter({ 'Customer email (': 'not-an-email' });
    const res = await runOpcli(['claims', 'file'], { env: env(), tty: true, prompter });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('customer.email');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('a garbled prompt answer is refused with the same text check as a flag; nothing is sent', async () => {
    const prompter = scriptedPrompter({ 'Customer email (': 'bob@example.com', 'Item name (': 'Mug\x1b[2J' });
    const res = await runOpcli(['claims', 'file'], { env: env(), tty: true, prompter });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('item.name: the answer holds a control character');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('without a terminal, lists the missing flags and sends nothing (exit 2)', async () => {
    const res = await runOpcli(['claims', 'file', '--customer-email', 'a@b.co'], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--item-name');
    expect(res.stderr).toContain('--warranty-period');
    expect(res.stderr).not.toContain('--customer-email,');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('an injected prompter does not make a pipe a terminal: no question is asked without a TTY', async () => {
    const prompter = scriptedPrompter({});
    const res = await runOpcli(['claims', 'file'], { env: env(), tty: false, prompter });
    expect(res.code).toBe(2);
    expect(prompter.asked).toHaveLength(0);
    expect(res.stderr).toContain('Missing required fields: --customer-email');
    expect(res.deps.canPrompt()).toBe(false);
  });

  it('--no-input refuses to prompt even on a terminal', async () => {
    const prompter = scriptedPrompter({});
    const res = await runOpcli(['--no-input', 'claims', 'file'], { env: env(), tty: true, prompter });
    expect(res.code).toBe(2);
    expect(prompter.asked).toHaveLength(0);
    expect(res.stderr).toContain('--customer-email');
  });

  it('refuses an empty, blank or garbled text flag by name, and sends nothing (but --signature "" is the spec\'s value)', async () => {
    const cases: [string, string, string][] = [
      ['--item-sku', '', '--item-sku: is empty'],
      ['--store-id', ' ', '--store-id: missing (required: a value)'],
      ['--shipping-city', 'Spring\x1b[2Jfield', '--shipping-city: holds a control character'],
      ['--item-name', 'Kettle \uFFFD', '--item-name: holds U+FFFD'],
      ['--item-image', ' ', '--item-image: is blank'],
      ['--signature', ' ', '--signature: is blank'],
      ['--shipping-lat', '', '--shipping-lat: is empty'],
    ];
    for (const [flag, value, said] of cases) {
      const args = [...FLAGS];
      if (args.includes(flag)) args[args.indexOf(flag) + 1] = value;
      else args.push(flag, value);
      const res = await runOpcli(['claims', 'file', ...args], { env: env() });
      expect(res.code, flag).toBe(2);
      expect(res.stderr, flag).toContain(said);
    }
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('takes --data values with their JSON types and refuses garbled text, naming the field; nothing is sent', async () => {
    const template = JSON.parse((await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout);
    const cases: [string, Record<string, unknown>, string][] = [
      ['a string for a boolean', { ...template, options: { fromValet: 'yes' } }, 'options.fromValet'],
      ['a string for a number', { ...template, item: { ...template.item, price: '49.99' } }, 'item.price'],
      ['a control character', { ...template, item: { ...template.item, name: 'Mug\u001b[2J' } }, 'item.name: holds a control character'],
      ['U+FFFD in a list', { ...template, item: { ...template.item, images: ['https://example.com/\uFFFD.jpg'] } }, 'item.images.0: holds U+FFFD'],
      ['an empty optional text', { ...template, item: { ...template.item, sku: '' } }, 'item.sku: is empty'],
      ['a blank signature', { ...template, signature: ' ' }, 'signature: is blank'],
    ];
    for (const [what, claim, said] of cases) {
      const path = join(dir, 'claim.json');
      writeFileSync(path, JSON.stringify(claim));
      const res = await runOpcli(['claims', 'file', '--data', path], { env: env() });
      expect(res.code, what).toBe(2);
      expect(res.stderr, what).toContain(said);
    }
    expect(claimBodies(sandbox)).toHaveLength(0);
    // A flag replaces the --data value it names, and what was wrong with it.
    writeFileSync(join(dir, 'fixed.json'), JSON.stringify({ ...template, item: { ...template.item, sku: '' }, signature: '' }));
    const fixed = await runOpcli(['claims', 'file', '--data', join(dir, 'fixed.json'), '--item-sku', 'SKU-1'], { env: env() });
    expect(fixed.code).toBe(0);
    expect(JSON.parse(claimBodies(sandbox)[0] as string)).toMatchObject({ item: { sku: 'SKU-1' }, signature: '' });
  });

  it('refuses a --data file that is not UTF-8, naming it; nothing is sent', async () => {
    const template = (await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout;
    const path = join(dir, 'latin1.json');
    writeFileSync(path, Buffer.from(template.replace('"name": "', '"name": "Caf\u00e9 '), 'latin1'));
    const res = await runOpcli(['claims', 'file', '--data', path], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`The --data file ${path} is not UTF-8 text.`);
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('names each invalid field with what was expected, and sends nothing', async () => {
    const args = [...FLAGS];
    args[args.indexOf('--item-price') + 1] = 'cheap';
    const res = await runOpcli(['claims', 'file', ...args], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--item-price: expected a number, got "cheap"');
    const bad = [...FLAGS];
    bad[bad.indexOf('--warranty-period') + 1] = 'one year';
    bad[bad.indexOf('--signature') + 1] = 'not a url';
    const res2 = await runOpcli(['claims', 'file', ...bad], { env: env() });
    expect(res2.code).toBe(2);
    expect(res2.stderr).toContain('warranty.warrantyPeriod');
    expect(res2.stderr).toContain('signature: expected an http:// or https:// URL, or an empty string, got "not a url"');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('--dry-run prints the request and sends nothing', async () => {
    const res = await runOpcli(['claims', 'file', ...FLAGS, '--dry-run', '--json'], { env: env() });
    expect(res.code).toBe(0);
    const doc = JSON.parse(res.stdout);
    expect(doc).toMatchObject({ method: 'POST', url: `${sandbox.url}/v1/claims/offline`, body: { item: { price: 49.99 } } });
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('a lost answer is reported as "may have been filed", and not resent', async () => {
    sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', status: 500, count: 1 }]);
    try {
      const res = await runOpcli(['claims', 'file', ...FLAGS], { env: env() });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('may or may not have been filed');
      expect(claimBodies(sandbox)).toHaveLength(1);
      expect(sandbox.counters.claimsCreated).toBe(1);
    } finally {
      sandbox.setFaults([]);
    }
  });

  it('field flags and batch flags do not mix', async () => {
    const res = await runOpcli(['claims', 'file', '--from', 'x.csv', '--item-name', 'K'], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--item-name');
    const res2 = await runOpcli(['claims', 'file', '--journal', 'j.jsonl', ...FLAGS], { env: env() });
    expect(res2.code).toBe(2);
    expect(res2.stderr).toContain('--journal');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });
});

describe('claims template', () => {
  it('--csv prints a header of every field path and an example row that files as it is', async () => {
    const res = await runOpcli(['claims', 'template', '--csv'], { env: env() });
    expect(res.code).toBe(0);
    const [header] = res.stdout.split('\n');
    expect(header?.split(',')).toEqual(
      expect.arrayContaining(['customer.email', 'item.price', 'item.images', 'shippingAddress.zip', 'options.requireCustomerSignature']),
    );
    const path = join(dir, 'template.csv');
    writeFileSync(path, res.stdout);
    const filed = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(filed.code).toBe(0);
    expect(JSON.parse(filed.stdout.split('\n')[0] as string)).toMatchObject({ line: 2, status: 'filed' });
    const sent = JSON.parse(claimBodies(sandbox)[0] as string);
    expect(sent.item.images).toHaveLength(2);
    expect(sent.item.name).toBe('Espresso machine, stainless');
  });
});
