/**
 * The gift card ledger in a shared record folder (record-dir): two operators, i.e. two config
 * folders, paying for one shop and store are held like two profiles of one folder.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { runBinary, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

const moneyCalls = (f: Fixture) => f.providerCalls().filter((c) => !c.startsWith('GET'));

describe('record-dir: one ledger for a team', () => {
  it('two config folders sharing a record-dir: one pays, the other is held, at once and one after the other', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const other = tempConfigDir();
    const shared = mkdtempSync(join(tmpdir(), 'opcli-records-'));
    try {
      chmodSync(shared, 0o2770);
      await sandboxProfile(fx.sandbox, other.dir);
      // The second operator's profile points at the same provider shop.
      for (const key of ['trigger-id']) await runOpcli(['config', 'unset', key], { env: { OPCLI_CONFIG_DIR: other.dir } });
      const envs = [fx.dir, other.dir].map((dir) => ({ OPCLI_CONFIG_DIR: dir, OPCLI_RECORD_DIR: shared, CI: '1' }));
      const [a, b] = await Promise.all(envs.map((env) => runBinary(aliceClaim('C-7001'), { env })));
      expect([a?.code, b?.code].sort(), `${a?.stderr}${b?.stderr}`).toEqual([0, 3]);
      expect(moneyCalls(fx)).toHaveLength(1);
      const later = await runOpcli(aliceClaim('c-7001'), { env: envs[1] });
      expect(later.code).toBe(3);
      expect(moneyCalls(fx)).toHaveLength(1);
      expect(existsSync(join(shared, LEDGER_FILE))).toBe(true);
      expect(existsSync(join(fx.dir, LEDGER_FILE))).toBe(false);
    } finally {
      other.cleanup();
      rmSync(shared, { recursive: true, force: true });
    }
  });

  it("a credit paid before record-dir was set is still held: the config folder's own ledger is read too", async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const shared = mkdtempSync(join(tmpdir(), 'opcli-records-'));
    try {
      expect((await fx.run(aliceClaim('C-7101'))).code).toBe(0);
      const moved = await fx.run(aliceClaim('C-7101'), { env: { OPCLI_RECORD_DIR: shared } });
      expect(moved.code).toBe(3);
      expect(moneyCalls(fx)).toHaveLength(1);
      const history = await fx.run(['giftcard', 'history', '--json'], { env: { OPCLI_RECORD_DIR: shared } });
      expect(JSON.parse(history.stdout).issuances).toHaveLength(1);
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
  });

  it('a credit paid in one record-dir is still held after record-dir moves to another, and after it is unset', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const first = mkdtempSync(join(tmpdir(), 'opcli-records-'));
    const second = mkdtempSync(join(tmpdir(), 'opcli-records-'));
    try {
      expect((await fx.run(aliceClaim('C-7201'), { env: { OPCLI_RECORD_DIR: first } })).code).toBe(0);
      const moved = await fx.run(aliceClaim('C-7201'), { env: { OPCLI_RECORD_DIR: second } });
      expect(moved.code, moved.stderr).toBe(3);
      expect(moved.stderr).toContain('already issued');
      expect((await fx.run(aliceClaim('C-7201'))).code).toBe(3);
      expect(moneyCalls(fx)).toHaveLength(1);
    } finally {
      rmSync(first, { recursive: true, force: true });
      rmSync(second, { recursive: true, force: true });
    }
  });
});
