/** The gift card ledger is a private file: never reached through a link, never kept in a shared folder or a file others can write. */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UnsafePathError } from '../../src/config/private-file.js';
import { Ledger, LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
let elsewhere: string;
beforeEach(() => {
  elsewhere = mkdtempSync(join(tmpdir(), 'opcli-ledger-elsewhere-'));
});
afterEach(() => {
  rmSync(elsewhere, { recursive: true, force: true });
});
giftcardSuite({ scanSecrets: false });

const moneyRequests = (f: Fixture) => f.providerCalls().filter((c) => !c.startsWith('GET'));

describe('the ledger file', () => {
  it('a planted link is refused by issue and history: exit 2, nothing paid, the target untouched', async () => {
    fx = await fixture();
    const target = join(elsewhere, 'other-ledger.jsonl');
    writeFileSync(target, '', { mode: 0o600 });
    symlinkSync(target, join(fx.dir, LEDGER_FILE));
    for (const argv of [aliceClaim('C-L1'), ['giftcard', 'history']]) {
      const r = await fx.run(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toContain(`${join(fx.dir, LEDGER_FILE)} is a symbolic link`);
      expect(r.stderr).not.toContain('unexpected failure');
    }
    expect(readFileSync(target, 'utf8')).toBe('');
    expect(moneyRequests(fx)).toEqual([]);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
  });

  it('a dangling link is not created through', async () => {
    fx = await fixture();
    const target = join(elsewhere, 'created-by-opcli.jsonl');
    symlinkSync(target, join(fx.dir, LEDGER_FILE));
    const r = await fx.run(aliceClaim('C-L2'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a symbolic link');
    expect(existsSync(target)).toBe(false);
    expect(moneyRequests(fx)).toEqual([]);
  });

  it('a ledger others can write is refused and left as it is', async () => {
    fx = await fixture();
    const path = join(fx.dir, LEDGER_FILE);
    writeFileSync(path, '');
    chmodSync(path, 0o666);
    const r = await fx.run(aliceClaim('C-L3'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`The gift card ledger ${path} can be written by other users (mode 0666)`);
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(moneyRequests(fx)).toEqual([]);
  });

  it('in a group- or world-writable folder nothing is read or appended, and the folder keeps its mode', () => {
    const shared = mkdtempSync(join(elsewhere, 'shared-'));
    for (const mode of [0o1777, 0o770]) {
      chmodSync(shared, mode);
      const ledger = new Ledger({ dir: shared });
      expect(() => ledger.read()).toThrow(UnsafePathError);
      expect(() => ledger.read()).toThrow(/can be written by/);
      expect(() =>
        ledger.append({ v: 1, type: 'warning', kind: 'possible-double-credit', issuance: 'i', key: 'k', at: 'now', user: 'u', message: 'm' }),
      ).toThrow(UnsafePathError);
      expect(existsSync(join(shared, LEDGER_FILE))).toBe(false);
    }
  });

  it('a fresh ledger is created 0600 by append and read back', () => {
    const dir = mkdtempSync(join(elsewhere, 'own-'));
    chmodSync(dir, 0o700);
    const ledger = new Ledger({ dir });
    ledger.append({ v: 1, type: 'warning', kind: 'possible-double-credit', issuance: 'i', key: 'k', at: 'now', user: 'u', message: 'm' });
    ledger.append({ v: 1, type: 'warning', kind: 'possible-double-credit', issuance: 'i', key: 'k', at: 'later', user: 'u', message: 'm2' });
    expect(ledger.read().records.map((r) => r.at)).toEqual(['now', 'later']);
    expect(statSync(join(dir, LEDGER_FILE)).mode & 0o777).toBe(0o600);
  });
});

describe('an outcome belongs to its attempt (src/record/outcome.ts)', () => {
  it('a `failed` appended after `issued`, well chained: nothing changes, the claim is held and history still says issued', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    expect((await fx.run(aliceClaim('C-L90'))).code).toBe(0);
    const path = join(fx.dir, LEDGER_FILE);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    const outcome = JSON.parse(lines.at(-1) as string);
    expect(outcome).toMatchObject({ type: 'outcome', status: 'issued' });
    const { createHash } = await import('node:crypto');
    const prev = createHash('sha256')
      .update(lines.at(-1) as string)
      .digest('hex');
    const forged = { ...outcome, status: 'failed', user: 'mallory', at: '2026-12-01T00:00:00.000Z', prev };
    writeFileSync(path, `${readFileSync(path, 'utf8')}${JSON.stringify(forged)}\n`);
    const again = await fx.run(aliceClaim('C-L90'));
    expect(again.code, again.stderr).toBe(3);
    expect(again.stderr).toContain('already issued');
    expect(moneyRequests(fx)).toHaveLength(1);
    const history = JSON.parse((await fx.run(['giftcard', 'history', '--json'])).stdout);
    expect(history.issuances.map((i: { status: string }) => i.status)).toEqual(['issued']);
  });
});
