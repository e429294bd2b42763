/**
 * Batch files as people save them (issue 43, rows 6-8), through the real `claims file` against the
 * sandbox: a template saved by Windows PowerShell 5.1 (UTF-16LE), a CSV from a European Excel (`;`
 * between cells, `249,99` for a price), spreadsheet date cells (a date alone, a day/month form), and
 * files in an encoding opcli cannot read, refused with nothing sent.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, COLUMNS, onBackend, RECORD_BACKENDS, results, row, rowOf } from './fixtures.js';

/** Text as Windows PowerShell 5.1's `>` writes it: UTF-16 with its byte order mark, CRLF line ends. */
function utf16(text: string, order: 'le' | 'be'): Buffer {
  const bytes = Buffer.from(`\ufeff${text.replace(/\r?\n/g, '\r\n')}`, 'utf16le');
  return order === 'le' ? bytes : bytes.swap16();
}

/** Rows as a spreadsheet writes them with `delimiter` between cells. */
function sheet(rows: Record<string, string>[], delimiter: string, options: { bom?: boolean; columns?: readonly string[] } = {}): string {
  const columns = options.columns ?? COLUMNS;
  const text = stringify([[...columns], ...rows.map((r) => columns.map((c) => r[c] ?? ''))], { delimiter, record_delimiter: '\r\n' });
  return `${options.bom ? '\ufeff' : ''}${text}`;
}

// The same files with the record of claims in files and in the team's PostgreSQL (fixtures.ts RECORD_BACKENDS).
for (const record of RECORD_BACKENDS) {
  describe(onBackend(record), () => {
    let sandbox: Sandbox;
    let dir: string;
    const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s), { record });

    const nothingSent = () => {
      expect(claimBodies(sandbox)).toHaveLength(0);
      expect(created()).toHaveLength(0);
    };

    describe('a template saved by Windows PowerShell 5.1 (row 6)', () => {
      it.each(['le', 'be'] as const)('UTF-16%s with its byte order mark is read: the example claim is filed as written', async (order) => {
        const template = await runOpcli(['claims', 'template', '--csv'], { env: env() });
        expect(template.code).toBe(0);
        const path = join(dir, 'claims.csv');
        writeFileSync(path, utf16(template.stdout.replace('your-store-id', sandbox.store.storeId), order));
        const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
        expect(res.stderr).toContain('Filed 1 claim');
        expect(res.code).toBe(0);
        expect(results(res.stdout).map((r) => [r.line, r.status])).toEqual([[2, 'filed']]);
        const sent = JSON.parse(claimBodies(sandbox)[0] as string);
        expect(sent).toMatchObject({ customer: { email: 'alice@example.com' }, item: { name: 'Espresso machine, stainless', price: 249.99 } });
      });

      it('a JSONL template saved the same way is read too', async () => {
        const template = await runOpcli(['claims', 'template', '--jsonl'], { env: env() });
        const path = join(dir, 'claims.jsonl');
        writeFileSync(path, utf16(template.stdout.replace('your-store-id', sandbox.store.storeId), 'le'));
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.stderr).toContain('Filed 1 claim');
        expect(res.code).toBe(0);
      });
    });

    describe('a CSV from a European Excel (row 7)', () => {
      it('`;` between cells is told from the header and 249,99 is read as 249.99; --out writes `;` too', async () => {
        const path = join(dir, 'claims.csv');
        writeFileSync(path, sheet([row(1, { 'item.price': '249,99' }), row(2, { 'item.price': '1249,5', 'item.name': 'Kettle; blue' })], ';', { bom: true }));
        const out = join(dir, 'out.csv');
        const res = await runOpcli(['claims', 'file', '--from', path, '--out', out], { env: env() });
        expect(res.stderr).toContain('Filed 2 claims');
        expect(res.code).toBe(0);
        const byRow = new Map(claimBodies(sandbox).map((b) => [rowOf(b), JSON.parse(b)]));
        expect(byRow.get(1)?.item.price).toBe(249.99);
        expect(byRow.get(2)?.item).toMatchObject({ price: 1249.5, name: 'Kettle; blue' });
        const written = readFileSync(out, 'utf8').split('\n');
        expect(written[0]).toBe(`${COLUMNS.join(';')};status;sourceOrderId;error`);
      });

      it('a tab-separated file is read; a comma file keeps refusing a decimal comma', async () => {
        const tabs = join(dir, 'tabs.csv');
        writeFileSync(tabs, sheet([row(1)], '\t'));
        const t = await runOpcli(['claims', 'file', '--from', tabs], { env: env() });
        expect(t.stderr).toContain('Filed 1 claim');
        const commas = join(dir, 'commas.csv');
        writeFileSync(commas, sheet([row(2, { 'item.price': '249,99' })], ','));
        const c = await runOpcli(['claims', 'file', '--from', commas, '--validate-only'], { env: env() });
        expect(c.code).toBe(3);
        expect(c.stderr).toContain('item.price: expected a number, got "249,99" (decimal notation, such as 49.99)');
      });

      it('in a `;` file, a price with a thousands separator is refused naming the form to use', async () => {
        const path = join(dir, 'claims.csv');
        writeFileSync(path, sheet([row(1, { 'item.price': '1.249,99' })], ';'));
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.code).toBe(3);
        expect(res.stderr).toContain('item.price: expected a number, got "1.249,99" (decimal notation, such as 49.99 or 49,99, with no thousands separator)');
        nothingSent();
      });

      it('a header whose separator cannot be told is one error naming it, and nothing is sent', async () => {
        const path = join(dir, 'claims.csv');
        // Split on commas or on semicolons, the header names one claim field either way.
        writeFileSync(path, 'customer.email,item.name;item.price\r\nalice@example.com,Kettle;49.99\r\n');
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.code).toBe(2);
        expect(res.stderr).toContain(
          "the separator between the header's columns cannot be told: it holds comma (,) (1) and semicolon (;) (1), and neither splits it into more claim field names",
        );
        expect(res.stderr).toContain('--delimiter');
        expect(res.stderr.match(/^Error/gm)).toHaveLength(1);
        nothingSent();
      });

      it('--delimiter reads a separator that is not told, and is refused for JSONL and when not one character', async () => {
        const path = join(dir, 'pipes.csv');
        writeFileSync(path, sheet([row(1)], '|'));
        const told = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
        expect(told.code).toBe(2);
        expect(told.stderr).toContain('unknown column "customer.email|customer.phoneNumber|');
        expect(told.stderr).toContain('The columns were split on the comma (,), told from the header; --delimiter gives another separator.');
        const res = await runOpcli(['claims', 'file', '--from', path, '--delimiter', '|'], { env: env() });
        expect(res.stderr).toContain('Filed 1 claim');
        expect(res.code).toBe(0);
        const jsonl = join(dir, 'c.jsonl');
        writeFileSync(jsonl, '{}\n');
        const j = await runOpcli(['claims', 'file', '--from', jsonl, '--delimiter', ';'], { env: env() });
        expect(j.code).toBe(2);
        expect(j.stderr).toContain('--delimiter applies to a CSV file');
        const two = await runOpcli(['claims', 'file', '--from', path, '--delimiter', ';;'], { env: env() });
        expect(two.code).toBe(2);
        expect(two.stderr).toContain('--delimiter must be one character');
      });
    });

    describe('dates as spreadsheets write them (row 8)', () => {
      it('a date without a time is sent as noon UTC that day', async () => {
        const path = join(dir, 'claims.csv');
        writeFileSync(path, sheet([row(1, { 'warranty.dateOfPurchase': '2024-05-01' }), row(2, { 'warranty.dateOfPurchase': ' 2024-02-29 ' })], ','));
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.stderr).toContain('Filed 2 claims');
        expect(res.code).toBe(0);
        const byRow = new Map(claimBodies(sandbox).map((b) => [rowOf(b), JSON.parse(b)]));
        expect(byRow.get(1)?.warranty.dateOfPurchase).toBe('2024-05-01T12:00:00Z');
        expect(byRow.get(2)?.warranty.dateOfPurchase).toBe('2024-02-29T12:00:00Z');
      });

      it('a day/month form is refused naming the column and the form to use, and nothing is sent', async () => {
        const path = join(dir, 'claims.csv');
        const dates = ['05/01/2024', '13.01.2024', '2024-02-30', '1/5/24 10:00', 'yesterday'];
        writeFileSync(
          path,
          sheet(
            dates.map((d, i) => row(i + 1, { 'warranty.dateOfPurchase': d })),
            ';',
          ),
        );
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.code).toBe(3);
        expect(res.stderr).toContain(
          'line 2: invalid, not sent\n  warranty.dateOfPurchase: "05/01/2024" does not say which number is the day and which the month: write the date as year-month-day, such as 2024-01-05 (day 5, month 1) or 2024-05-01 (month 5, day 1)',
        );
        expect(res.stderr).toContain(
          'line 3: invalid, not sent\n  warranty.dateOfPurchase: "13.01.2024" does not say which number is the day and which the month: write the date as year-month-day, such as 2024-01-13 (day 13, month 1)',
        );
        expect(res.stderr).toContain('line 4: invalid, not sent\n  warranty.dateOfPurchase: "2024-02-30" is not a date that exists: February 2024 has 29 days');
        expect(res.stderr).toContain('line 5: invalid, not sent\n  warranty.dateOfPurchase: "1/5/24 10:00" does not say which number');
        expect(res.stderr).toContain(
          'line 6: invalid, not sent\n  warranty.dateOfPurchase: expected a date such as 2024-05-01, or an ISO 8601 date-time with a time zone such as 2024-05-01T10:00:00Z, got "yesterday"',
        );
        nothingSent();
      });

      it('a JSON claim takes a date alone too', async () => {
        const template = await runOpcli(['claims', 'template', '--jsonl'], { env: env() });
        const path = join(dir, 'claims.jsonl');
        writeFileSync(path, template.stdout.replace('your-store-id', sandbox.store.storeId).replace('2024-05-01T10:00:00Z', '2024-05-01'));
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.code).toBe(0);
        expect(JSON.parse(claimBodies(sandbox)[0] as string).warranty.dateOfPurchase).toBe('2024-05-01T12:00:00Z');
      });
    });

    describe('an encoding opcli cannot read is refused, naming it, with nothing sent', () => {
      it('a Windows-1252 file: the line of its first byte that is not UTF-8, how to save as CSV UTF-8, exit 2, even with valid rows before it', async () => {
        const path = join(dir, 'claims.csv');
        const rows = Array.from({ length: 30 }, (_, i) => row(i + 1, i === 24 ? { 'shippingAddress.city': 'Zürich' } : {}));
        writeFileSync(path, Buffer.from(sheet(rows, ','), 'latin1'));
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.code).toBe(2);
        expect(res.stderr).toMatch(
          /claims\.csv line 26: byte [\d,]+ \(0xFC\) is not part of a UTF-8 character: the file is not UTF-8 \(a legacy encoding such as Windows-1252/,
        );
        expect(res.stderr).toContain('"CSV UTF-8 (Comma delimited) (*.csv)"');
        expect(res.stderr.match(/^Error/gm)).toHaveLength(1);
        nothingSent();
      });

      it('UTF-32 and UTF-16 without its byte order mark are named', async () => {
        const text = sheet([row(1)], ',');
        const cases: [string, Buffer, string][] = [
          [
            'utf32.csv',
            Buffer.concat([
              Buffer.from([0xff, 0xfe, 0, 0]),
              Buffer.from(
                text.replace(/./gsu, (c) => `${c}\0`),
                'utf16le',
              ),
            ]),
            'is in UTF-32LE',
          ],
          ['nobom.csv', Buffer.from(text, 'utf16le'), 'is in UTF-16LE or UTF-32 without a byte order mark'],
        ];
        for (const [name, bytes, said] of cases) {
          const path = join(dir, name);
          writeFileSync(path, bytes);
          const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
          expect(res.code, name).toBe(2);
          expect(res.stderr).toContain(said);
          expect(res.stderr).toContain('CSV UTF-8');
        }
        nothingSent();
      });
    });
  });
}
