/**
 * "Never twice": every way a person edits a batch file (delete, insert, reorder, re-sort, columns,
 * newlines, quoting, a spreadsheet re-save) is followed by a rerun that sends nothing new.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { coerceText, FIELD_BY_KEY, spreadsheetDamage } from '../../src/claims/fields.js';
import {
  contentHash,
  contentTag,
  hashOfRobust,
  occurrenceKey,
  recordSimilarity,
  robustJson,
  robustText,
  similarity,
  userKeyHash,
} from '../../src/claims/plan.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { COLUMNS, claimBodies, duplicates, results, row, rowOf, writeCsv, claimsSuite } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s));

/** Rows of the file as they are written: cells by column. */
type Rows = Record<string, string>[];

function write(path: string, columns: readonly string[], rows: Rows, options: { crlf?: boolean; quoted?: boolean; bom?: boolean } = {}): void {
  const text = stringify([[...columns], ...rows.map((r) => columns.map((c) => r[c] ?? ''))], {
    record_delimiter: options.crlf ? '\r\n' : '\n',
    quoted: options.quoted,
  });
  writeFileSync(path, `${options.bom ? '\ufeff' : ''}${text}`);
}

/** Ten rows: one invalid (line 7), one the API refuses (set by a fault), the rest filed. */
function tenRows(): Rows {
  return Array.from({ length: 10 }, (_, i) =>
    row(i + 1, i === 5 ? { 'item.price': 'twelve' } : { 'item.price': i % 2 ? '1.50' : '49.90', 'options.requireCustomerSignature': i % 3 ? 'TRUE' : 'false' }),
  );
}

describe('edits followed by a rerun send nothing new', () => {
  const edits: [string, (rows: Rows) => { columns?: readonly string[]; rows: Rows; crlf?: boolean; quoted?: boolean; bom?: boolean }][] = [
    ['the invalid line deleted (sed -i 7d)', (rows) => ({ rows: rows.filter((_, i) => i !== 5) })],
    ['a row inserted at the top', (rows) => ({ rows: [row(99, { 'item.price': 'x' }), ...rows] })],
    ['the rows reversed', (rows) => ({ rows: [...rows].reverse() })],
    [
      're-sorted by e-mail, descending',
      (rows) => ({ rows: [...rows].sort((a, b) => (b['customer.email'] as string).localeCompare(a['customer.email'] as string)) }),
    ],
    ['the columns reordered', (rows) => ({ rows, columns: [...COLUMNS].reverse() })],
    ['LF to CRLF with a BOM', (rows) => ({ rows, crlf: true, bom: true })],
    ['every cell quoted', (rows) => ({ rows, quoted: true })],
    [
      '1.50 as 1.5, TRUE as true',
      (rows) => ({
        rows: rows.map((r) => ({
          ...r,
          'item.price': r['item.price'] === '1.50' ? '1.5' : r['item.price'] === '49.90' ? '49.9' : (r['item.price'] as string),
          'options.requireCustomerSignature': (r['options.requireCustomerSignature'] as string).toLowerCase(),
        })),
      }),
    ],
  ];
  for (const [name, edit] of edits) {
    it(name, async () => {
      const path = join(dir, 'claims.csv');
      const rows = tenRows();
      write(path, COLUMNS, rows);
      // The 4th request is refused (400): a row rejected as sent, which must not be resent either.
      sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', status: 400, after: 3, count: 1 }]);
      const first = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '1'], { env: env() });
      expect(first.code).toBe(3);
      expect(first.stderr).toContain('Filed 8 claims; 1 rejected by the API, 1 invalid (not sent)');
      sandbox.setFaults([]);
      const sent = claimBodies(sandbox).length;
      expect(sent).toBe(9);

      const edited = edit(rows);
      write(path, edited.columns ?? COLUMNS, edited.rows, edited);
      const rerun = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
      expect(claimBodies(sandbox)).toHaveLength(sent);
      expect(rerun.stderr).toContain('Filed 0 claims');
      expect(rerun.stderr).toContain('Settled by an earlier run, not sent again: 8 filed, 1 rejected, 0 uncertain.');
      expect(rerun.code).toBe(3);
      const statuses = results(rerun.stdout).map((r) => r.status);
      expect(statuses.filter((s) => s === 'filed')).toHaveLength(8);
      expect(created()).toHaveLength(8);
    });
  }

  it('the hint after a partial run is true: fixing the invalid row in place files only it', async () => {
    const path = join(dir, 'claims.csv');
    const rows = tenRows();
    write(path, COLUMNS, rows);
    const first = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(first.code).toBe(3);
    expect(first.stderr).toContain('a row is known by its content, so rows filed, rejected or uncertain are not sent again, whatever their line');
    rows[5] = row(6);
    write(path, COLUMNS, [...rows].reverse());
    const second = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(second.code).toBe(0);
    expect(claimBodies(sandbox).slice(9).map(rowOf)).toEqual([6]);
    expect(duplicates(created().map((c) => c.raw))).toEqual([]);
  });
});

describe('a spreadsheet round trip', () => {
  it('leading zeros and + dropped, decimals reformatted: nothing new is sent; a long id in scientific notation and a changed cell are named', async () => {
    const path = join(dir, 'claims.csv');
    const columns = [...COLUMNS, 'item.sku', 'item.sourceItemId'];
    const rows = Array.from({ length: 6 }, (_, i) =>
      row(i + 1, {
        'shippingAddress.zip': '02139',
        'customer.phoneNumber': '+15550100',
        'item.price': '49.90',
        ...({ 'item.sku': `0004${i}`, 'item.sourceItemId': i === 4 ? '12345678901234567890' : '0001' } as Record<string, string>),
      } as never),
    );
    rows[2] = { ...rows[2], 'item.details': 'row 3, part 2/1' } as Record<string, string>;
    write(path, columns, rows);
    const first = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(first.code).toBe(0);
    expect(created()).toHaveLength(6);
    expect(JSON.parse(claimBodies(sandbox)[0] as string).shippingAddress.zip).toBe('02139');

    // What a spreadsheet's default import does on a re-save.
    const saved = rows.map((r) => ({
      ...r,
      'shippingAddress.zip': '2139',
      'customer.phoneNumber': '15550100',
      'item.price': '49.9',
      'item.sku': String(Number(r['item.sku'])),
      'item.sourceItemId': r['item.sourceItemId'] === '0001' ? '1' : '1.23456789012346E+19',
      'item.details': (r['item.details'] as string).replace('2/1', '02/01/26'),
    }));
    write(path, columns, saved.reverse());
    const rerun = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(rerun.code).toBe(3);
    expect(claimBodies(sandbox)).toHaveLength(6);
    expect(rerun.stderr).toContain('Settled by an earlier run, not sent again: 4 filed');
    // The id a spreadsheet turned into 1.23456789012346E+19 has lost its digits: invalid.
    expect(rerun.stderr).toMatch(
      /line 3: invalid, not sent\n {2}item\.sourceItemId: "1\.23456789012346E\+19" looks like a number a spreadsheet turned into scientific notation/,
    );
    // The date made of "2/1" is not a damage opcli can see; the row looks like the one filed.
    expect(rerun.stderr).toMatch(
      /line 5: looks like the claim filed from line 4 on \d{4}-\d{2}-\d{2} \(item\.details row 3, part 2\/1 → row 3, part 02\/01\/26\); not sent; --allow-similar files it/,
    );
    expect(rerun.stderr).toContain('1 invalid (not sent), 0 uncertain, 1 held (not sent)');
  });

  it('a damaged cell is invalid on a first run too, and a date in a code column is named', async () => {
    const path = join(dir, 'claims.csv');
    const columns = [...COLUMNS, 'item.sku'];
    write(path, columns, [
      row(1, { 'item.sku': '1.23457E+19' } as never),
      row(2, { 'item.sku': '09/12/26' } as never),
      row(3, { 'item.sku': 'SEP-12' } as never),
    ]);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('line 2: invalid, not sent\n  item.sku: "1.23457E+19" looks like a number a spreadsheet turned into scientific notation');
    expect(res.stderr).toContain('line 3: invalid, not sent\n  item.sku: "09/12/26" looks like a date a spreadsheet made of a code');
    expect(claimBodies(sandbox).map(rowOf)).toEqual([3]);
  });

  it('claims template --help says how to import a CSV with every column as text', async () => {
    const res = await runOpcli(['claims', 'template', '--help'], { env: env() });
    expect(res.stdout).toContain('with every column as text');
    expect(res.stdout).toContain('Google Sheets');
  });
});

describe('--key COLUMN', () => {
  it('a batch row under --key is recorded in the record of claims with its key and content tag, what a resume asks the record by', async () => {
    const path = join(dir, 'claims.csv');
    const columns = ['rma', ...COLUMNS];
    write(
      path,
      columns,
      [1, 2].map((i) => ({ ...row(i), rma: `RMA-${i}` })),
    );
    expect((await runOpcli(['claims', 'file', '--from', path, '--key', 'rma'], { env: env() })).code).toBe(0);
    const recordIntents = () =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((n) => /claims-record-[0-9a-f]{16}\.jsonl$/.test(n))
        .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n'))
        .filter((l) => l.includes('"type":"intent"'))
        .map((l) => JSON.parse(l));
    const intents = recordIntents();
    expect(intents.map((i) => i.row).sort()).toEqual([userKeyHash('RMA-1'), userKeyHash('RMA-2')].sort());
    // The content tag is that of the content's key (the record's `key` under --key).
    for (const i of intents) expect(i.tag).toBe(contentTag(i.key));
    // Without --key the row's key is the content's (`key`): nothing more is written.
    writeCsv(path, [row(3)]);
    expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
    const plain = recordIntents().filter((i) => i.line === 2 && i.row === undefined);
    expect(plain).toHaveLength(1);
    expect(plain[0].tag).toBeUndefined();
  });

  it("identifies rows by the user's id (not sent), refuses a filed id with changed content, and names empty, repeated and damaged ids", async () => {
    const path = join(dir, 'claims.csv');
    const columns = ['rma', ...COLUMNS];
    const rows = [1, 2, 3].map((i) => ({ ...row(i), rma: `RMA-000${i}` }));
    write(path, columns, rows);
    const first = await runOpcli(['claims', 'file', '--from', path, '--key', 'rma'], { env: env() });
    expect(first.code).toBe(0);
    expect(claimBodies(sandbox).every((b) => !b.includes('RMA-'))).toBe(true);

    // Row 2's content changes (its details), row 3 moves up, RMA-0001 loses its leading zeros.
    const edited = [{ ...rows[2] }, { ...rows[1], 'item.details': 'row 2, changed' }, { ...rows[0], rma: 'RMA-0001' }] as Rows;
    write(path, columns, edited);
    const rerun = await runOpcli(['claims', 'file', '--from', path, '--key', 'rma'], { env: env() });
    expect(rerun.code).toBe(3);
    expect(rerun.stderr).toMatch(
      /line 3: RMA-0002 was filed on \d{4}-\d{2}-\d{2} from line 3 with different content \(item\.details row 2 → row 2, changed\); not sent/,
    );
    expect(claimBodies(sandbox)).toHaveLength(3);

    // Without a key, a missing cell, or a duplicated key: invalid rows, named.
    write(path, columns, [
      { ...row(7), rma: '' },
      { ...row(8), rma: 'RMA-9' },
      { ...row(9), rma: 'RMA-9' },
      { ...row(10), rma: '1.2E+19' },
    ]);
    const bad = await runOpcli(['claims', 'file', '--from', path, '--key', 'rma'], { env: env() });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('line 2: invalid, not sent\n  rma: the --key column rma is empty');
    expect(bad.stderr).toContain('line 4: invalid, not sent\n  rma: RMA-9 appears again (first on line 3)');
    expect(bad.stderr).toContain('line 5: invalid, not sent\n  rma: "1.2E+19" looks like a number a spreadsheet turned into scientific notation');
    expect(claimBodies(sandbox).slice(3).map(rowOf)).toEqual([8]);
    const none = await runOpcli(['claims', 'file', '--from', path, '--key', 'ticket'], { env: env() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('there is no column "ticket" for --key');
  });
});

describe('--out results', () => {
  it('calls invalid rows invalid and is created readable by its owner only', async () => {
    const path = join(dir, 'claims.csv');
    writeCsv(path, [row(1), row(2, { 'item.price': 'x' })]);
    const out = join(dir, 'out.csv');
    const res = await runOpcli(['claims', 'file', '--from', path, '--out', out, '--jsonl'], { env: env() });
    expect(res.code).toBe(3);
    const parsed = parse(readFileSync(out, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(parsed.map((r) => r.status)).toEqual(['filed', 'invalid']);
    expect(results(res.stdout).map((r) => r.status)).toEqual(['filed', 'invalid']);
    const { statSync } = await import('node:fs');
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });
});

describe('the robust form', () => {
  it('reads what a spreadsheet changes as the same text, and keeps everything else apart', () => {
    const same: [string, string][] = [
      ['02139', '2139'],
      ['+15550100', '15550100'],
      ['0001', '1'],
      ['49.90', '49.9'],
      ['049.50', '49.5'],
      ['1E5', '100000'],
      [' Kettle ', 'Kettle'],
      ['0', '000'],
    ];
    for (const [a, b] of same) expect(robustText(a), `${a} ~ ${b}`).toBe(robustText(b));
    const apart: [string, string][] = [
      ['02139', '02138'],
      ['ESP-200', 'ESP-0200'],
      ['+1 555 0100', '1 555 0100'],
      ['1.5', '15'],
      ['-1', '1'],
      ['12345678901234567890', '12345678901234567891'],
    ];
    for (const [a, b] of apart) expect(robustText(a), `${a} ≁ ${b}`).not.toBe(robustText(b));
    // Key order, empty values and number formatting do not change a claim's hash; a value does.
    expect(contentHash({ b: { y: '0042', x: 1.5 }, a: '', c: [] })).toBe(contentHash({ b: { x: 1.5, y: '42' } }));
    expect(contentHash({ b: 'x' })).not.toBe(contentHash({ b: 'y' }));
  });

  it('names the damage a spreadsheet did, and only that', () => {
    const sku = FIELD_BY_KEY.get('item.sku') as NonNullable<ReturnType<typeof FIELD_BY_KEY.get>>;
    const details = FIELD_BY_KEY.get('item.details') as NonNullable<ReturnType<typeof FIELD_BY_KEY.get>>;
    expect(spreadsheetDamage(sku, '1.23456789012346E+19')).toContain('scientific notation');
    expect(spreadsheetDamage(details, '1.2E+05')).toContain('scientific notation');
    expect(spreadsheetDamage(sku, '09/12/26')).toContain('a date a spreadsheet made of a code');
    expect(spreadsheetDamage(sku, '12-Sep')).toContain('a date');
    for (const fine of ['ESP-200', 'SEP-12', '1E5', '2/1', '00042']) expect(spreadsheetDamage(sku, fine), fine).toBeUndefined();
    expect(spreadsheetDamage(details, '09/12/26')).toBeUndefined();
  });
});

describe('the row key of objects whose keys come in different orders', () => {
  it('is the same for the same content in any key order, and tells apart objects that share their first key', () => {
    // The key lists are remembered by their first key: each order below is seen after another one.
    const a = { customer: { email: 'a@example.com' }, item: { name: 'Kettle', price: 1.5 }, storeId: 's' };
    const b = { customer: { email: 'a@example.com' }, storeId: 's', item: { price: 1.5, name: 'Kettle' } };
    const c = { customer: { email: 'a@example.com' }, item: { name: 'Kettle', price: 1.5, sku: 'K-1' }, storeId: 's' };
    const d = { customer: { email: 'a@example.com' }, item: { name: 'Kettle' }, storeId: 's' };
    for (let round = 0; round < 2; round++) {
      expect(contentHash(b)).toBe(contentHash(a));
      expect(contentHash(c)).not.toBe(contentHash(a));
      expect(contentHash(d)).not.toBe(contentHash(a));
      expect(contentHash({ ...c, item: { sku: 'K-1', price: 1.5, name: 'Kettle' } })).toBe(contentHash(c));
    }
  });

  it('reads an enum cell in any case, and keeps one that names no value as written for the schema to refuse', () => {
    const channel = FIELD_BY_KEY.get('salesChannel');
    if (!channel) throw new Error('salesChannel is a claim field');
    expect(coerceText(channel, ' in_store ')).toEqual({ value: 'IN_STORE' });
    expect(coerceText(channel, 'In_Store')).toEqual({ value: 'IN_STORE' });
    expect(coerceText(channel, 'IN_STORE')).toEqual({ value: 'IN_STORE' });
    expect(coerceText(channel, 'on the moon')).toEqual({ value: 'on the moon' });
  });
});

describe('the keys a journal and the record of claims hold', () => {
  // Keys are persisted: a key computed differently would send again the rows an existing journal
  // or record holds as filed. These are the keys of every version since the row key was chosen.
  const tricky = {
    b: { y: '0042', x: 1.5, z: [' a ', '', 'say "hi"\n\ttab\\', 'é ∑ \u{1F600}', '\u0001\u007f\u2028'] },
    a: '  +0012.500 ',
    n: [-0, 1e21, 123456789012, 0.1, true, false, null],
    e: { d: '', f: [] },
    lone: 'x\ud800y',
    k: '1E5',
  };

  it('the robust form and its hashes, for text that needs escaping and text that does not', () => {
    const robust = robustJson(tricky);
    expect(robust).toBe(
      '{"a":"12.5","b":{"x":1.5,"y":"42","z":["a",null,"say \\"hi\\"\\n\\ttab\\\\","é ∑ 😀","\\u0001\u007f"]},"k":"100000","lone":"x\\ud800y","n":[0,1e+21,123456789012,0.1,true,false,null]}',
    );
    const hash = contentHash(tricky);
    expect(hash).toBe(hashOfRobust(robust));
    expect(hash).toBe('01002a1fb3f500b9809032fb12f48f79');
    expect(occurrenceKey(hash, 2)).toBe('30307af7befd22d2ce20154b21818094');
    const claim = { customer: { email: ' Bob@Example.COM' }, item: { name: 'Kettle', sku: '00K-1' } };
    expect(similarity(claim)).toBe('012b7032977d081d');
    expect(recordSimilarity(claim)).toBe('b5c752c9857c5e33');
    expect(userKeyHash(' 0042 ')).toBe('67b0879a4fd90470d3af710bff1449f4');
  });

  it('writes any text as JSON.stringify does, and any number', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.double(), (text, n) => {
        const t = robustText(text);
        expect(robustJson({ t: text, n })).toBe(`{${Number.isNaN(n) ? '"n":null' : `"n":${JSON.stringify(n)}`}${t ? `,"t":${JSON.stringify(t)}` : ''}}`);
      }),
    );
  });

  it('reads digits, signs, points and exponents as the regular expressions of every earlier version did', () => {
    const before = (text: string): string => {
      const t = text.trim();
      if (/^\+?\d+$/.test(t)) return t.replace(/^\+/, '').replace(/^0+(?=\d)/, '');
      const d = /^([+-]?)(\d*)\.(\d*)$/.exec(t);
      if (d && (d[2] || d[3])) {
        const whole = (d[2] ?? '').replace(/^0+(?=\d)/, '') || '0';
        const fraction = (d[3] ?? '').replace(/0+$/, '');
        return `${d[1] === '-' && (whole !== '0' || fraction) ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
      }
      if (/^\d+(\.\d+)?e\+?\d+$/i.test(t) && Number.isSafeInteger(Number(t))) return String(Number(t));
      return t;
    };
    fc.assert(
      fc.property(fc.stringMatching(/^[ 0-9+\-.eEx]{0,12}$/), (text) => {
        expect(robustText(text)).toBe(before(text));
      }),
    );
  });

  it('a batch records the keys and look-alike fingerprints of every earlier version', async () => {
    const path = join(dir, 'claims.csv');
    const repeated = row(1, { 'item.details': 'lid "cracked"\nbadly', 'shippingAddress.zip': '02139', 'item.price': '49.90' });
    writeCsv(path, [repeated, repeated, row(2, { 'item.images': 'https://x.example/a.png;https://x.example/b.png', 'customer.email': 'Bob@Example.com ' })], {
      crlf: true,
      bom: true,
    });
    const res = await runOpcli(['claims', 'file', '--from', path, '--allow-duplicates'], { env: env() });
    expect(res.code).toBe(0);
    // Each row's intent in the record of claims: its row key (`row`, else `key`), line and fingerprint in its batch (`like`).
    const sending = readdirSync(dir)
      .filter((n) => /^claims-record-[0-9a-f]{16}\.jsonl$/.test(n))
      .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n'))
      .filter((l) => l.includes('"type":"intent"'))
      .map((l) => JSON.parse(l) as { key: string; row?: string; line: number; like: string });
    expect(sending.map(({ key, row, line, like }) => ({ key: row ?? key, line, sim: like }))).toEqual([
      { key: '5f4e87f8beca4d26a63cda569ebf3927', line: 2, sim: '97ce16b88f9d5e82' },
      { key: 'cd3f0964b94c9c34b2fabc7258190f43', line: 4, sim: '97ce16b88f9d5e82' },
      { key: '0f52964cb39db65924abc4d3ba8f7c0c', line: 6, sim: 'f8296d326025d756' },
    ]);
  });
});
