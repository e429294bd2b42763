/**
 * The ledger answers "what holds this credit back" from its index (src/record/index-file.ts,
 * src/record/store.ts), not by reading every line: as properties over families of ledgers, the
 * answer is the one a whole read gives, whether the index was kept up as lines were appended,
 * rebuilt from nothing, or left behind by lines another run appended; and a line removed or
 * rewritten under the index is found and named (exit 2), never skipped.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emailIdentity } from '../../src/core/identity.js';
import { issuanceKey, keyParts, Ledger, LEDGER_FILE, LEDGER_LINES, type LedgerRecord } from '../../src/giftcard/ledger.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opcli-ledger-index-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const scope = { shopUrl: 'shop.example', storeId: 'store_1' };
const at = '2026-12-01T10:00:00.000Z';

/** One credit of the family: a claim id, a customer, an amount, its outcome (none: the run died). */
const credit = fc.record({
  claim: fc.constantFrom('C-1', 'C-2', 'c-1', 'C‐1', 'C-3', 'B-7'),
  email: fc.constantFrom('ann@example.com', 'ANN@example.com', 'bob@example.com', 'cy@example.com'),
  cents: fc.constantFrom(500, 1000),
  status: fc.constantFrom('issued', 'failed', 'uncertain', undefined),
});
interface Credit {
  claim: string;
  email: string;
  cents: number;
  status?: 'issued' | 'failed' | 'uncertain';
}

let n = 0;
/** Appends one credit's attempt and outcome as `giftcard issue` does. */
function append(ledger: Ledger, c: Credit): void {
  const issuance = `i-${++n}`;
  const key = issuanceKey({ claimId: c.claim, orderNumber: '1001', bonus: false }, scope);
  const common = { v: 1 as const, issuance, key, at, user: 'alice' };
  ledger.append({
    ...common,
    type: 'attempt',
    claimId: c.claim,
    orderNumber: '1001',
    bonus: false,
    amountCents: c.cents,
    amount: (c.cents / 100).toFixed(2),
    email: c.email,
    name: 'Ann',
    profile: 'default',
    firstPath: 'trigger',
    forced: false,
    host: 'h',
  });
  if (c.status) ledger.append({ ...common, type: 'outcome', status: c.status, triggerPosted: false, possibleDoubleCredit: false, notes: [] });
}

/** What a whole read says holds a credit back: the lines of its claim, and of every claim of its customer. */
function wholeRead(ledger: Ledger, key: string, email: string): string[] {
  const records = ledger.read().records;
  const customer = emailIdentity(email);
  const whats = new Set([keyParts(key).what]);
  for (const r of records) if (r.type === 'attempt' && emailIdentity(r.email) === customer) whats.add(keyParts(r.key).what);
  return records.filter((r) => whats.has(keyParts(r.key).what)).map(line);
}

const line = (r: LedgerRecord): string => `${r.issuance} ${r.type}`;
const held = (ledger: Ledger, key: string, email: string): string[] => ledger.heldAgainst(key, email).records.map(line);

describe('the ledger index', () => {
  it('answers as a whole read does: kept up line by line, rebuilt from nothing, or behind the lines another run appended', () => {
    fc.assert(
      fc.property(fc.array(fc.array(credit, { maxLength: 6 }), { minLength: 1, maxLength: 5 }), credit, (sessions, asked) => {
        rmSync(dir, { recursive: true, force: true });
        const ledger = new Ledger({ dir, configDir: dir });
        const key = issuanceKey({ claimId: asked.claim, orderNumber: '1001', bonus: false }, scope);
        for (const [i, session] of sessions.entries()) {
          for (const c of session) append(ledger, c);
          // Another run's lines are read past the index on odd sessions; even ones ask as they go.
          if (i % 2 === 0) expect(held(ledger, key, asked.email)).toEqual(wholeRead(ledger, key, asked.email));
        }
        expect(held(ledger, key, asked.email)).toEqual(wholeRead(ledger, key, asked.email));
        rmSync(join(dir, 'record-index'), { recursive: true, force: true });
        expect(held(ledger, key, asked.email)).toEqual(wholeRead(ledger, key, asked.email));
      }),
      { numRuns: 25 },
    );
  });

  it('is kept in the reader’s own config folder, beside the witness, not beside a shared ledger', () => {
    n = 0;
    const records = mkdtempSync(join(tmpdir(), 'opcli-ledger-shared-'));
    try {
      const ledger = new Ledger({ dir: records, configDir: dir });
      append(ledger, { claim: 'C-1', email: 'ann@example.com', cents: 500, status: 'issued' });
      ledger.heldAgainst(issuanceKey({ claimId: 'C-1', orderNumber: '1001', bonus: false }, scope), 'ann@example.com');
      expect(readdirSync(records).sort()).toEqual([LEDGER_FILE]);
      expect(readdirSync(dir)).toContain('record-index');
      // A ledger read with no config folder of the reader's own is read whole, and no index is written anywhere.
      const bare = new Ledger({ dir: records });
      expect(bare.heldAgainst(issuanceKey({ claimId: 'c‐1', orderNumber: '1001', bonus: false }, scope), 'x@example.com').records.map(line)).toEqual([
        'i-1 attempt',
        'i-1 outcome',
      ]);
      expect(readdirSync(records).sort()).toEqual([LEDGER_FILE]);
    } finally {
      rmSync(records, { recursive: true, force: true });
    }
  });

  it('a line removed under the index (each position of a family) stops the credit of a claim it shifted, naming the line: never an answer that skips a payment', () => {
    const claims = ['C-1', 'C-2', 'C-3', 'C-4'];
    for (let removed = 2; removed <= claims.length * 2 - 2; removed++) {
      rmSync(dir, { recursive: true, force: true });
      const ledger = new Ledger({ dir, configDir: dir });
      for (const claim of claims) append(ledger, { claim, email: `${claim}@example.com`, cents: 500, status: 'issued' });
      const keyOf = (claim: string) => issuanceKey({ claimId: claim, orderNumber: '1001', bonus: false }, scope);
      // Indexed: every line covered.
      expect(held(ledger, keyOf('C-4'), 'C-4@example.com')).toHaveLength(2);
      const path = join(dir, LEDGER_FILE);
      const lines = readFileSync(path, 'utf8').split('\n');
      lines.splice(removed - 1, 1);
      writeFileSync(path, lines.join('\n'));
      // Every claim whose lines moved: its entries now point at other lines.
      const asked = claims[Math.floor(removed / 2)] as string;
      let error: unknown;
      try {
        ledger.heldAgainst(keyOf(asked), `${asked}@example.com`);
      } catch (e) {
        error = e;
      }
      expect(error, `line ${removed} removed, ${asked} asked`).toMatchObject({ exitCode: 2 });
      expect((error as Error).message).toMatch(new RegExp(`line ${removed} does not follow the line before it`));
    }
  });

  it('two lines of one length swapped under the index (each pair of a family): the moved lines are found, the record read whole and the first named, exit 2', () => {
    const claims = ['C-1', 'C-2', 'C-3', 'C-4'];
    const keyOf = (claim: string) => issuanceKey({ claimId: claim, orderNumber: '1001', bonus: false }, scope);
    // Outcome lines (2, 4, 6, 8) have one length; the last one stays, so the covered part still ends as the index says.
    for (const [a, b] of [
      [2, 4],
      [2, 6],
      [4, 6],
    ] as const) {
      rmSync(dir, { recursive: true, force: true });
      n = 0;
      const ledger = new Ledger({ dir, configDir: dir });
      for (const claim of claims) append(ledger, { claim, email: `${claim}@example.com`, cents: 500, status: 'issued' });
      expect(held(ledger, keyOf('C-1'), 'x@example.com')).toHaveLength(2);
      const path = join(dir, LEDGER_FILE);
      const lines = readFileSync(path, 'utf8').split('\n');
      expect((lines[a - 1] as string).length).toBe((lines[b - 1] as string).length);
      [lines[a - 1], lines[b - 1]] = [lines[b - 1] as string, lines[a - 1] as string];
      writeFileSync(path, lines.join('\n'));
      const asked = claims[a / 2 - 1] as string;
      expect(() => ledger.heldAgainst(keyOf(asked), 'x@example.com'), `lines ${a} and ${b} swapped`).toThrow(
        new RegExp(`line ${a} does not follow the line before it`),
      );
    }
  });

  it('a long first read hands its terms to the index as it goes; damage past them stops the read there, and the index resumes from the last clean line once it is set aside', async () => {
    // 40,000 credits, 80,000 lines and 120,000 terms written through the record module (the index takes 100,000 terms at a time).
    const { LogWriter, openLog } = await import('../../src/record/log.js');
    const { closeSync } = await import('node:fs');
    const keyOf = (claim: string) => issuanceKey({ claimId: claim, orderNumber: '1001', bonus: false }, scope);
    const fd = openLog({ dir }, LEDGER_FILE, 'gift card ledger', true) as number;
    let text = '';
    for (let i = 0; i < 40_000; i++) {
      const common = { v: 1, issuance: `h${i}`, key: keyOf(`H-${i}`), at, user: 'alice' };
      text += `${JSON.stringify({ ...common, type: 'attempt', claimId: `H-${i}`, orderNumber: '1001', bonus: false, amountCents: 500, amount: '5.00', email: `c${i % 5000}@example.com`, name: 'C', profile: 'default', firstPath: 'trigger', forced: false, host: 'h' })}\n`;
      text += `${JSON.stringify({ ...common, type: 'outcome', status: 'issued', triggerPosted: true, possibleDoubleCredit: false, notes: [] })}\n`;
      if (i === 39_000) text += 'not a record\n';
    }
    new LogWriter().append(fd, text);
    closeSync(fd);
    const ledger = new Ledger({ dir, configDir: dir });
    expect(() => ledger.heldAgainst(keyOf('H-3'), 'c3@example.com')).toThrow(/line 78003 is not a record opcli can read/);
    // The clean lines before the damage are indexed: the state covers them, not the line after.
    const [id] = readdirSync(join(dir, 'record-index'));
    const state = JSON.parse(readFileSync(join(dir, 'record-index', id as string, 'state.json'), 'utf8'));
    expect(state.lines).toBeGreaterThan(60_000);
    expect(state.lines).toBeLessThan(78_003);
    // Set aside by the repair, the ledger reads on from there and answers as a whole read does.
    const { repairFile, repairTargetOf } = await import('../../src/record/repair.js');
    await repairFile(repairTargetOf(ledger.place, LEDGER_LINES), { now: () => Date.parse(at) });
    expect(held(ledger, keyOf('H-39999'), 'c4999@example.com')).toEqual(wholeRead(ledger, keyOf('H-39999'), 'c4999@example.com'));
    expect(held(ledger, keyOf('H-3'), 'c3@example.com')).toHaveLength(16);
  }, 60_000);

  it("a bucket shorter than its state says (a crash lost its write), or one cut to nothing: the index is rebuilt and the answer is the whole read's", () => {
    for (const cut of ['half', 'empty'] as const) {
      rmSync(dir, { recursive: true, force: true });
      n = 0;
      const ledger = new Ledger({ dir, configDir: dir });
      for (const claim of ['C-1', 'C-2', 'C-3']) append(ledger, { claim, email: 'ann@example.com', cents: 500, status: 'issued' });
      const key = issuanceKey({ claimId: 'C-2', orderNumber: '1001', bonus: false }, scope);
      const expected = wholeRead(ledger, key, 'ann@example.com');
      expect(held(ledger, key, 'ann@example.com')).toEqual(expected);
      const [id] = readdirSync(join(dir, 'record-index'));
      const folder = join(dir, 'record-index', id as string);
      for (const name of readdirSync(folder).filter((f) => /^b[0-9a-f]{2}$/.test(f))) {
        const bytes = readFileSync(join(folder, name));
        writeFileSync(join(folder, name), cut === 'half' ? bytes.subarray(0, Math.floor(bytes.length / 2)) : Buffer.alloc(0));
      }
      expect(held(ledger, key, 'ann@example.com'), cut).toEqual(expected);
      expect(expected).toHaveLength(6);
    }
  });

  it('a torn last line after the covered part is an uncertain action naming its claim', () => {
    const ledger = new Ledger({ dir, configDir: dir });
    append(ledger, { claim: 'C-1', email: 'ann@example.com', cents: 500, status: 'issued' });
    const key = issuanceKey({ claimId: 'C-2', orderNumber: '1001', bonus: false }, scope);
    expect(ledger.heldAgainst(key, 'bob@example.com').uncertain).toEqual([]);
    writeFileSync(join(dir, LEDGER_FILE), `${readFileSync(join(dir, LEDGER_FILE), 'utf8')}{"v":1,"issuance":"i-torn","key":${JSON.stringify(key)},"typ`);
    expect(ledger.heldAgainst(key, 'bob@example.com').uncertain).toEqual([expect.objectContaining({ line: 3, key, issuance: 'i-torn' })]);
  });

  it('giftcard history brings the index up to date as a credit does (issue 40): after it, the state covers every line', async () => {
    const ledger = new Ledger({ dir, configDir: dir });
    for (const claim of ['C-1', 'C-2', 'C-3']) append(ledger, { claim, email: 'ann@example.com', cents: 500, status: 'issued' });
    rmSync(join(dir, 'record-index'), { recursive: true, force: true });
    const seen: string[] = [];
    await ledger.eachIssuance((i) => seen.push(i.attempt.claimId as string));
    expect(seen).toEqual(['C-1', 'C-2', 'C-3']);
    const [id] = readdirSync(join(dir, 'record-index'));
    const state = JSON.parse(readFileSync(join(dir, 'record-index', id as string, 'state.json'), 'utf8'));
    expect(state.lines).toBe(6);
  });
});
