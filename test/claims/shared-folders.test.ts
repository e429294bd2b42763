/**
 * Batch files in a folder other people can write (issue 27, item 2): links planted at the journal
 * or --out path, files another user created first, a lock another user left, journals of another
 * service, and what --dry-run says. The two-user cases create a second OS user (the suite runs as
 * root in CI) and are skipped, with the reason printed, where that is not possible.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type OsUser, osUsersWhy, otherOsUser } from '../os-users.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { claimBodies, row, writeCsv, writeRows, claimsSuite, journalOf } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

/** The second OS user, when this run can make one (root, useradd present). */
const otherUser = otherOsUser('opcli-other', 'two-user cases of test/claims/shared-folders.test.ts skipped');
const twoUsers = osUsersWhy === undefined;

/** The input and its default journal, in this test's folder (real paths). */
function batch(n = 3): { input: string; journal: string } {
  const input = join(realpathSync(dir), 'claims.csv');
  writeRows(input, n);
  return { input, journal: `${input}.journal.jsonl` };
}

/** A file of yours that must not change: what a planted link points at. */
function precious(): { path: string; text: string } {
  const path = join(dir, 'precious.txt');
  const text = 'my precious notes\n';
  writeFileSync(path, text, { mode: 0o600 });
  return { path, text };
}

/** Gives a file (or a link itself) to the other user, when there is one. */
function plantAsOther(path: string, link = false): void {
  const other = otherUser();
  if (!other) return;
  if (link) lchownSync(path, other.uid, other.gid);
  else chownSync(path, other.uid, other.gid);
}

describe('a link planted in place of a batch file', () => {
  it('at <input>.journal.jsonl: exit 2 naming the link, the file it points at unchanged, nothing sent', async () => {
    const { input, journal } = batch();
    const p = precious();
    symlinkSync(p.path, journal);
    plantAsOther(journal, true);
    const res = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`The journal ${journal} is a symbolic link (to ${p.path})`);
    expect(res.stderr).toContain('or pass --journal with a path in a folder only you can write');
    expect(readFileSync(p.path, 'utf8')).toBe(p.text);
    expect(sandbox.requests).toEqual([]);
  });

  it('at the --out path: exit 2 naming it, the file it points at unchanged, nothing sent', async () => {
    const { input } = batch();
    const p = precious();
    const out = join(realpathSync(dir), 'results.csv');
    symlinkSync(p.path, out);
    plantAsOther(out, true);
    const res = await runOpcli(['claims', 'file', '--from', input, '--out', out], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`The results file ${out} is a symbolic link (to ${p.path})`);
    expect(readFileSync(p.path, 'utf8')).toBe(p.text);
    expect(sandbox.requests).toEqual([]);
  });
});

describe('batch files created first by someone else, or that others can write', () => {
  it.skipIf(!twoUsers)('a journal or --out created 0666 by another user is refused, naming the user; their files stay as they were', async () => {
    const { input, journal } = batch();
    const who = otherUser() as OsUser;
    writeFileSync(journal, '');
    chmodSync(journal, 0o666);
    plantAsOther(journal);
    const res = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `The journal ${journal} is owned by another user (${who.name} (uid ${who.uid}); you are root (uid 0)): refused; nothing was sent.`,
    );
    expect(res.stderr).toContain('Check who created it; move it aside if it is not yours. Or pass --journal with a path in a folder only you can write.');
    expect(readFileSync(journal, 'utf8')).toBe('');

    const out = join(realpathSync(dir), 'results.csv');
    writeFileSync(out, 'theirs\n');
    chmodSync(out, 0o666);
    plantAsOther(out);
    const own = join(realpathSync(dir), 'own.journal.jsonl');
    const outRes = await runOpcli(['claims', 'file', '--from', input, '--journal', own, '--out', out], { env: env() });
    expect(outRes.code).toBe(2);
    expect(outRes.stderr).toContain(`The results file ${out} is owned by another user (${who.name} (uid ${who.uid})`);
    expect(readFileSync(out, 'utf8')).toBe('theirs\n');
    expect(sandbox.requests).toEqual([]);
  });

  it('a journal of yours that others can write (0666) is refused with its mode and the way on; nothing sent', async () => {
    const { input, journal } = batch();
    writeFileSync(journal, '');
    chmodSync(journal, 0o666);
    const res = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`The journal ${journal} can be written by other users (mode 0666): refused; nothing was sent.`);
    expect(res.stderr).toContain(`chmod 600 ${journal}`);
    expect(sandbox.requests).toEqual([]);
  });

  it('results and journals are 0600, existing ones of yours included', async () => {
    const { input, journal } = batch();
    const out = join(dir, 'results.csv');
    writeFileSync(out, 'old results\n', { mode: 0o644 });
    chmodSync(out, 0o644);
    writeFileSync(journal, '', { mode: 0o644 });
    chmodSync(journal, 0o644);
    const res = await runOpcli(['claims', 'file', '--from', input, '--out', out], { env: env() });
    expect(res.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // The journal is only read now (an earlier version's): left as it was.
    expect(statSync(journal).mode & 0o777).toBe(0o644);
    expect(readFileSync(out, 'utf8')).toContain('status,sourceOrderId,error');
    expect(readFileSync(out, 'utf8')).not.toContain('old results');
  });
});

describe('a journal names its service and store', () => {
  /** A second sandbox (another base URL, same store id) with a logged-in config folder. */
  async function secondSandbox(): Promise<{ sandbox: Sandbox; env: Record<string, string>; close: () => Promise<void> }> {
    const s = await startSandbox();
    const config = tempConfigDir();
    await sandboxProfile(s, config.dir);
    return {
      sandbox: s,
      env: { OPCLI_CONFIG_DIR: config.dir },
      close: async () => {
        await s.close();
        config.cleanup();
      },
    };
  }

  it('a trial against one sandbox, then the same file against another: the rows are filed on the second, with a notice', async () => {
    const { input, journal } = batch(3);
    const trial = await secondSandbox();
    try {
      const first = await runOpcli(['claims', 'file', '--from', input], { env: trial.env });
      expect(first.code).toBe(0);
      expect(claimBodies(trial.sandbox)).toHaveLength(3);
      // The journal 0.2.0 would have written of the trial (this version writes none).
      journalOf(input, trial.env.OPCLI_CONFIG_DIR);
      const header = JSON.parse(readFileSync(journal, 'utf8').split('\n')[0] as string);
      expect(header).toMatchObject({
        journal: 'opcli claims',
        version: 3,
        service: { origin: new URL(trial.sandbox.url).origin, storeId: 'store_1001', profile: 'default' },
      });

      const second = await runOpcli(['claims', 'file', '--from', input], { env: env() });
      expect(second.code).toBe(0);
      expect(claimBodies(sandbox)).toHaveLength(3);
      expect(second.stderr).toContain(`holds 6 entries recorded against ${new URL(trial.sandbox.url).origin}, store store_1001 (profile default)`);
      expect(second.stderr).toContain('they are no proof that a row was filed here, so a row only they record is sent as new');

      // Each service's record protects its own rows: neither files anything again. Once the journal
      // was read in, its entries are not mentioned again.
      const third = await runOpcli(['claims', 'file', '--from', input], { env: env() });
      expect(third.code).toBe(0);
      expect(third.stderr).not.toContain('no proof');
      const back = await runOpcli(['claims', 'file', '--from', input], { env: trial.env });
      expect(back.code).toBe(0);
      expect(claimBodies(sandbox)).toHaveLength(3);
      expect(claimBodies(trial.sandbox)).toHaveLength(3);
    } finally {
      await trial.close();
    }
  });

  it('a journal whose header names another base URL is no proof: the rows are filed here and the notice says why', async () => {
    const { input, journal } = batch(2);
    const trial = await secondSandbox();
    try {
      expect((await runOpcli(['claims', 'file', '--from', input], { env: trial.env })).code).toBe(0);
      journalOf(input, trial.env.OPCLI_CONFIG_DIR);
    } finally {
      await trial.close();
    }
    // The same entries under a header naming a service this run does not use.
    const lines = readFileSync(journal, 'utf8').split('\n');
    const header = JSON.parse(lines[0] as string);
    header.service.origin = 'https://api.forged.example';
    writeFileSync(journal, [JSON.stringify(header), ...lines.slice(1)].join('\n'), { mode: 0o600 });
    const res = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(res.code).toBe(0);
    expect(claimBodies(sandbox)).toHaveLength(2);
    expect(res.stderr).toContain(`Notice: the journal ${journal} holds 4 entries recorded against https://api.forged.example, store store_1001`);
  });

  it('a journal of the older format (no service) that is yours alone keeps protecting its rows, and says so once', async () => {
    const { input, journal } = batch(2);
    expect((await runOpcli(['claims', 'file', '--from', input], { env: env() })).code).toBe(0);
    expect(claimBodies(sandbox)).toHaveLength(2);
    journalOf(input);
    // What opcli wrote before headers named the service.
    const lines = readFileSync(journal, 'utf8').split('\n');
    writeFileSync(journal, [JSON.stringify({ journal: 'opcli claims', version: 2, created: '2026-01-01T00:00:00.000Z' }), ...lines.slice(1)].join('\n'), {
      mode: 0o600,
    });
    const again = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(again.code).toBe(0);
    expect(claimBodies(sandbox)).toHaveLength(2);
    expect(again.stderr).toContain(`Notice: the journal ${journal} holds 4 entries of an older opcli, which did not record the service`);
    expect(again.stderr).toContain('they are taken as filed against');
    const third = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(third.code).toBe(0);
    expect(third.stderr).not.toContain('older opcli');
    expect(claimBodies(sandbox)).toHaveLength(2);
  });
});

describe("the record's lock (a batch's one lock: no journal is written)", () => {
  /** The lock of the record of claims in the config folder, the record made by a batch of no rows (nothing sent). */
  async function recordLock(): Promise<string> {
    const empty = join(dir, 'empty.csv');
    writeRows(empty, 0);
    expect((await runOpcli(['claims', 'file', '--from', empty], { env: env() })).code).toBe(0);
    sandbox.resetLog();
    const name = readdirSync(dir).find((n) => /^claims-record-[0-9a-f]+\.jsonl$/.test(n)) as string;
    return join(dir, `${name.slice(0, -'.jsonl'.length)}.lock`);
  }

  it.skipIf(!twoUsers)('a lock another user left is refused at once, naming the user, the process, the host and when, and how to clear it', async () => {
    const { input } = batch();
    const who = otherUser() as OsUser;
    const lock = await recordLock();
    mkdirSync(lock, { mode: 0o700 });
    writeFileSync(join(lock, 'owner'), JSON.stringify({ pid: 1, host: hostname(), token: 'theirs', at: '2026-11-27T09:00:00.000Z' }));
    plantAsOther(join(lock, 'owner'));
    plantAsOther(lock);
    const res = await runOpcli(['claims', 'file', '--from', input, '--lock-wait', '1m'], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `The lock ${lock} belongs to another user: user ${who.name} (uid ${who.uid}), pid 1 on host ${hostname()}, since 2026-11-27T09:00:00.000Z.`,
    );
    expect(res.stderr).toContain(`rm -r ${lock}`);
    expect(sandbox.requests).toEqual([]);
  });

  it('a lock a live run of yours holds names that run', async () => {
    const { input } = batch();
    const lock = await recordLock();
    mkdirSync(lock, { mode: 0o700 });
    writeFileSync(join(lock, 'owner'), JSON.stringify({ pid: process.pid, host: hostname(), token: 'mine', at: '2026-11-27T09:30:00.000Z' }));
    const res = await runOpcli(['claims', 'file', '--from', input, '--lock-wait', '0s'], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain(
      `user root (uid 0), pid ${process.pid} on host ${hostname()}, since 2026-11-27T09:30:00.000Z; if no opcli runs as pid ${process.pid} on host ${hostname()} (check: \`ps -p ${process.pid} -o pid,lstart,command\`), remove the lock: \`rm -r ${lock}\``,
    );
    expect(sandbox.requests).toEqual([]);
  });
});

describe('--dry-run of a batch', () => {
  it('says which rows a real run would send, refuse, hold or skip, in its words; sends nothing and leaves the record as it was', async () => {
    const input = join(realpathSync(dir), 'claims.csv');
    const journal = `${input}.journal.jsonl`;
    writeCsv(input, [row(1), row(2)]);
    expect((await runOpcli(['claims', 'file', '--from', input], { env: env() })).code).toBe(0);
    const record = readdirSync(dir).find((n) => /^claims-record-[0-9a-f]+\.jsonl$/.test(n)) as string;
    const before = readFileSync(join(dir, record), 'utf8');
    sandbox.resetLog();
    // Row 1 again (filed earlier), one like row 2 (same e-mail and item), a new one, an invalid one.
    writeCsv(input, [row(1), row(2, { 'item.details': 'row 2, again' }), row(3), row(4, { 'item.price': 'free' })]);
    const res = await runOpcli(['claims', 'file', '--from', input, '--dry-run'], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('line 3: would be held: looks like the claim filed from line 3');
    expect(res.stderr).toContain('line 5: would be refused: invalid, not sent');
    expect(res.stderr).toContain(
      'Dry run of 4 rows: 1 would be sent, 1 would be refused (invalid), 1 would be held, 1 settled by an earlier run would not be sent again (1 filed, 0 rejected, 0 uncertain). Nothing was sent and nothing was recorded.',
    );
    expect(res.stderr).toContain('A real run would not file 2 rows.');
    expect(sandbox.requests).toEqual([]);
    expect(readFileSync(join(dir, record), 'utf8')).toBe(before);
    expect(existsSync(journal)).toBe(false);

    // The real run does what the dry run said.
    const real = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(real.code).toBe(3);
    expect(real.stderr).toContain('line 3: looks like the claim filed from line 3');
    expect(real.stderr).toContain('line 5: invalid, not sent');
    expect(claimBodies(sandbox)).toHaveLength(1);
  });

  it('with --key, a repeated key is named as a real run would refuse it', async () => {
    const input = join(realpathSync(dir), 'claims.csv');
    const rows = [row(1), row(2)];
    const header = ['ticket', ...Object.keys(rows[0] as object)];
    const text = [header, ['T-1', ...Object.values(row(1))], ['T-1', ...Object.values(row(2))]]
      .map((r) => r.map((c) => JSON.stringify(c)).join(','))
      .join('\n');
    writeFileSync(input, `${text}\n`);
    const res = await runOpcli(['claims', 'file', '--from', input, '--key', 'ticket', '--dry-run'], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('line 3: would be refused: invalid, not sent');
    expect(res.stderr).toContain('ticket: T-1 appears again (first on line 2)');
    expect(sandbox.requests).toEqual([]);
  });
});
