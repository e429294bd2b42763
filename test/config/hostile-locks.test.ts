/**
 * Locks in a team's shared record folder (record-dir) that another member made hostile (issue 38,
 * rows 7 and 8): an owner record that is a FIFO or a link to /dev/zero hung the run in open(),
 * ignoring Ctrl-C and SIGTERM, or grew it to 4.2 GB; a planted owner `{"pid":1}` made every
 * `giftcard issue` fail after 15 s. The runs that could hang are the built binary with a generous
 * kill, so a regression fails the test instead of hanging the suite. The planted files belong to a
 * second OS user where this run can make one (root, useradd), else to this user (said once).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { claimBodies, claimsSuite } from '../claims/fixtures.js';
import { aliceClaim, fixture, giftcardSuite } from '../giftcard/fixture.js';
import { runBinary, runOpcli } from '../helpers.js';
import { otherOsUser } from '../os-users.js';

/** A generous kill for a run that hangs without the fix (before the test's own time-out): the test fails rather than hangs. */
const HANG_KILL_MS = 45_000;
/** The time-out of a test that may wait for that kill. */
const HANG_TEST_MS = 120_000;

const otherUser = otherOsUser('opcli-team', 'test/config/hostile-locks.test.ts plants the locks as this user, not another');

let shared = '';
beforeEach(() => {
  shared = mkdtempSync(join(tmpdir(), 'opcli-team-records-'));
  chmodSync(shared, 0o2770);
});
afterEach(() => rmSync(shared, { recursive: true, force: true }));

/** Gives a planted file or folder to the other member (the folder's group stays), when there is one. */
function asOther(path: string): void {
  const other = otherUser();
  if (other) lchownSync(path, other.uid, -1);
}

/** A lock folder at `<shared>/<name>.lock` whose owner record is a FIFO or a link to /dev/zero. */
function plantHostile(name: string, kind: 'fifo' | 'zero'): string {
  const lock = join(shared, `${name}.lock`);
  mkdirSync(lock, { mode: 0o770 });
  const owner = join(lock, 'owner');
  if (kind === 'fifo') execFileSync('mkfifo', ['-m', '660', owner]);
  else symlinkSync('/dev/zero', owner);
  asOther(owner);
  asOther(lock);
  return lock;
}

/** What a refused hostile lock says: which lock, what its owner record is, and the way out. */
function expectRefused(run: { code: number | null; signal: NodeJS.Signals | null; stderr: string }, lock: string, kind: 'fifo' | 'zero'): void {
  expect(run.signal, 'the run hung and was killed').toBeNull();
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toContain(`The lock ${lock} cannot be used: the owner record of a lock ${join(lock, 'owner')} is `);
  expect(run.stderr).toContain(kind === 'fifo' ? 'is a named pipe, not a regular file' : 'is a symbolic link');
  expect(run.stderr).toContain(`If no opcli run holds it, remove the lock: \`rm -r ${lock}\``);
}

describe.runIf(process.platform !== 'win32')('a hostile owner record at the record of claims lock (row 7)', () => {
  let sandbox: Sandbox;
  let dir = '';
  const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

  /** A claim of `claims template --json`, with a marker of its own. */
  async function claimFile(details: string): Promise<string> {
    const template = JSON.parse((await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout);
    const path = join(dir, `${details}.json`);
    writeFileSync(
      path,
      JSON.stringify({ ...template, item: { ...template.item, details }, customer: { ...template.customer, email: `${details}@example.com` } }),
    );
    return path;
  }

  it(
    'a FIFO or a link to /dev/zero as its owner: claims file is refused at once (exit 2) naming the lock and `rm -r`, nothing sent',
    async () => {
      const teamEnv = env({ OPCLI_RECORD_DIR: shared });
      expect((await runOpcli(['claims', 'file', '--data', await claimFile('seed')], { env: teamEnv })).code).toBe(0);
      const record = readdirSync(shared).find((n) => /^claims-record-[0-9a-f]{16}\.jsonl$/.test(n)) as string;
      const sent = claimBodies(sandbox).length;
      for (const kind of ['fifo', 'zero'] as const) {
        const lock = plantHostile(record.replace(/\.jsonl$/, ''), kind);
        const run = await runBinary(['claims', 'file', '--data', await claimFile(`new-${kind}`)], { env: teamEnv, timeoutMs: HANG_KILL_MS });
        expectRefused(run, lock, kind);
        expect(claimBodies(sandbox)).toHaveLength(sent);
        rmSync(lock, { recursive: true });
      }
    },
    HANG_TEST_MS,
  );
});

describe.runIf(process.platform !== 'win32')("the gift card ledger's lock in record-dir (rows 7 and 8)", () => {
  giftcardSuite();
  const money = (calls: string[]) => calls.filter((c) => !c.startsWith('GET'));

  it(
    'a FIFO or a link to /dev/zero as its owner: giftcard issue is refused at once (exit 2) naming the lock and `rm -r`, nothing paid',
    async () => {
      const fx = await fixture({ unset: ['trigger-id'] });
      for (const kind of ['fifo', 'zero'] as const) {
        const lock = plantHostile('giftcard-ledger', kind);
        const run = await runBinary(aliceClaim(`C-80${kind.length}`), { env: { ...fx.env, OPCLI_RECORD_DIR: shared, CI: '1' }, timeoutMs: HANG_KILL_MS });
        expectRefused(run, lock, kind);
        expect(money(fx.providerCalls())).toEqual([]);
        rmSync(lock, { recursive: true });
      }
    },
    HANG_TEST_MS,
  );

  it('a planted owner {"pid":1} of this host: giftcard issue takes the lock over and pays once', async () => {
    const fx = await fixture({ unset: ['trigger-id'] });
    const lock = join(shared, 'giftcard-ledger.lock');
    mkdirSync(lock, { mode: 0o770 });
    writeFileSync(join(lock, 'owner'), JSON.stringify({ pid: 1, host: hostname(), token: 'planted', at: new Date().toISOString() }), { mode: 0o660 });
    asOther(join(lock, 'owner'));
    asOther(lock);
    const run = await fx.run(aliceClaim('C-8101'), { env: { OPCLI_RECORD_DIR: shared } });
    expect(run.code, run.stderr).toBe(0);
    expect(money(fx.providerCalls())).toHaveLength(1);
  });
});
