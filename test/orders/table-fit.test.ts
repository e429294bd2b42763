/**
 * The orders table as a person reads it at 80 columns: amounts right-aligned with two decimals,
 * money and ids never cut (other columns shrink, or are left out and named), counts written as
 * the progress line writes them.
 */
import { describe, expect, test } from 'vitest';
import { profileSuite, runOpcli } from '../helpers.js';
import { hasScript, inPty } from '../pty.js';

let env: Record<string, string>;
profileSuite((s) => ({ env } = s), { sandbox: { orders: 1200 } });

const MANY = 'sourceOrderId,sourceOrderNumber,customerEmail,customerName,total,subtotal,tax,shippingCost,platformId';

/** The cells of the table's body rows. */
function cells(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('│'))
    .slice(1)
    .map((l) =>
      l
        .split('│')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
}

test('amounts have two decimals and are right-aligned', async () => {
  const r = await runOpcli(['orders', 'list', '--size', '4'], { env: { ...env, COLUMNS: '80', NO_COLOR: '1' }, tty: true });
  expect(r.code).toBe(0);
  const rows = r.stdout.split('\n').filter((l) => /^│ ord_/.test(l));
  expect(rows).toHaveLength(4);
  const totals = rows.map((l) => l.split('│')[4] as string);
  for (const t of totals) expect(t).toMatch(/^ +\d+\.\d\d $/);
  // Right-aligned: every amount ends in the same place.
  expect(new Set(totals.map((t) => t.length)).size).toBe(1);
  expect(totals.some((t) => /^ {2,}/.test(t))).toBe(true);
  expect(r.stdout).toContain(' 45.50 │');
});

test('--columns with more than 80 columns can hold keeps money and ids whole and names what it left out', async () => {
  const r = await runOpcli(['orders', 'list', '--size', '4', '--columns', MANY], { env: { ...env, COLUMNS: '80', NO_COLOR: '1' }, tty: true });
  expect(r.code).toBe(0);
  for (const line of r.stdout.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  expect(r.stdout).not.toContain('…');
  const body = cells(r.stdout);
  expect(body[0]?.[0]).toBe('ord_000001');
  for (const row of body) for (const cell of row.slice(2)) expect(cell).toMatch(/^\d+\.\d\d$/);
  expect(r.stderr.replace(/\s+/g, ' ')).toContain('Left out to fit 80 columns: customerEmail, customerName, platformId (their values are not cut).');
  // A pipe still gets every column.
  const piped = await runOpcli(['orders', 'list', '--size', '4', '--columns', MANY], { env });
  expect(piped.stdout.split('\n')[0]?.split('\t')).toHaveLength(9);
  expect(piped.stderr).not.toContain('Left out');
});

test('a currency stays beside its amounts, and a column asked for but empty is shown, not dropped in silence', async () => {
  const columns = 'sourceOrderId,sourceOrderNumber,total,currency,customerEmail,customerName,customerPhone,sourceCreatedAt,platformId';
  const r = await runOpcli(['orders', 'list', '--size', '4', '--columns', columns], { env: { ...env, COLUMNS: '80', NO_COLOR: '1' }, tty: true });
  expect(r.code).toBe(0);
  const header = r.stdout.split('\n').find((l) => l.includes('sourceOrderId')) ?? '';
  expect(header).toContain('currency');
  expect(cells(r.stdout)[0]?.[3]).toMatch(/^[A-Z]{3}$/);
  const left = r.stderr.replace(/\s+/g, ' ');
  expect(left).toContain('Left out to fit 80 columns:');
  // Every column asked for is either in the table or named as left out.
  for (const name of columns.split(',')) expect(header.includes(name) || left.includes(name)).toBe(true);
  const empty = await runOpcli(['orders', 'list', '--size', '3', '--columns', 'sourceOrderId,customerPhone'], {
    env: { ...env, COLUMNS: '80', NO_COLOR: '1' },
    tty: true,
  });
  expect(empty.stdout).toContain('customerPhone');
  expect(cells(empty.stdout).map((row) => row[1])).toEqual(['', '', '']);
});

test('the footer writes counts as the progress line does', async () => {
  const r = await runOpcli(['orders', 'list', '--size', '100', '--limit', '1100'], { env });
  expect(r.stderr).toContain('1,100 of 1,200 orders in 11 pages (stopped at --limit 1100).');
  const one = await runOpcli(['orders', 'list', '--size', '5'], { env });
  expect(one.stderr).toContain('5 of 1,200 orders · page 1 of 240');
});

describe.runIf(hasScript)('in a pseudo-terminal at 80 columns', () => {
  test('the progress line is gone before the table, and no money or id is cut', async () => {
    const r = await inPty(['orders', 'list', '--limit', '250', '--size', '2', '--columns', MANY], { ...env, NO_COLOR: '1' });
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).not.toMatch(/orders\/s[┌│]/);
    expect(r.raw).toMatch(/\x1b\[2K┌/);
    expect(r.screen).not.toMatch(/\d\.…|ord…|#\d*…/);
    expect(r.screen).toContain('250 of 1,200 orders in 125 pages');
    expect(r.screen).toMatch(/Left out to fit 80 columns: customerEmail/);
  });
});
