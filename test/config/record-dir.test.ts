/**
 * A team's record-dir (src/config/record-dir.ts, src/record/chain.ts, src/record/witness.ts):
 * whose folder it may be, who wrote each line, and what a teammate who can write the folder cannot
 * do unseen. The cases run as OS users the test creates (the suite runs as root in CI) and are
 * skipped, with the reason printed, elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { createOsGroup, createOsUser, type OsUser, osUsersWhy, removeOsGroup, removeOsUser } from '../os-users.js';
import { claimBodies, claimsSuite, results, row, writeCsv } from '../claims/fixtures.js';
import { createHash } from 'node:crypto';

let sandbox: Sandbox;
let dir = '';
const { env } = claimsSuite((s) => {
  ({ sandbox, dir } = s);
});

const why = osUsersWhy;

let carol: OsUser | undefined;
let bob: OsUser | undefined;
let team: { name: string; gid: number } | undefined;
const folders: string[] = [];

beforeAll(() => {
  if (why) {
    console.warn(`two-user cases of test/config/record-dir.test.ts skipped: ${why}`);
    return;
  }
  team = createOsGroup('opcli-team');
  carol = createOsUser('opcli-carol');
  bob = createOsUser('opcli-bob', [team.name]);
});
afterAll(() => {
  for (const u of [carol, bob]) removeOsUser(u);
  if (team) removeOsGroup(team);
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

/** A new folder, given to `owner` and `gid` with `mode`. */
function folder(owner: number, gid: number, mode: number): string {
  const f = mkdtempSync(join(tmpdir(), 'opcli-team-'));
  folders.push(f);
  chownSync(f, owner, gid);
  chmodSync(f, mode);
  return f;
}

describe.skipIf(why)('whose folder a record-dir may be', () => {
  it('a folder another user owns, under a group you are not in, holding a planted record: refused (exit 2), nothing sent', async () => {
    const u = carol as OsUser;
    const theirs = folder(u.uid, u.gid, 0o755);
    writeFileSync(join(theirs, 'giftcard-ledger.jsonl'), '');
    chownSync(join(theirs, 'giftcard-ledger.jsonl'), u.uid, u.gid);
    const path = join(dir, 'claims.csv');
    writeCsv(path, [row(1)]);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env({ OPCLI_RECORD_DIR: theirs }) });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`The record folder ${theirs} (record-dir) is owned by another user (${u.name} (uid ${u.uid})`);
    expect(res.stderr).toContain('owned by you or root');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });
});

/** Runs a shell command as `user`, with the team's group (what a teammate can do to the folder). */
function asMember(user: OsUser, gid: number, command: string): void {
  const r = spawnSync('sh', ['-c', command], { uid: user.uid, gid, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`as ${user.name}: ${command}: ${r.stderr}`);
}

/** The team's folder (root's, the team's group, 2770) with one batch of two claims filed into it by the test's user. */
async function teamRecord(): Promise<{ shared: string; record: string; path: string }> {
  const shared = folder(0, (team as { gid: number }).gid, 0o2770);
  const path = join(dir, 'claims.csv');
  writeCsv(path, [row(1), row(2)]);
  const filed = await runOpcli(['claims', 'file', '--from', path], { env: env({ OPCLI_RECORD_DIR: shared }) });
  expect(filed.code, filed.stderr).toBe(0);
  const name = readdirSync(shared).find((n) => n.startsWith('claims-record-')) as string;
  return { shared, record: join(shared, name), path };
}

/** A copy of the filed file, run plainly: what a teammate's line must not make file again. */
async function fileCopy(path: string, shared: string) {
  const copy = join(dir, `copy-${randomBytes(2).toString('hex')}.csv`);
  copyFileSync(path, copy);
  return runOpcli(['claims', 'file', '--from', copy, '--jsonl'], { env: env({ OPCLI_RECORD_DIR: shared }) });
}

describe.skipIf(why)('what a teammate can do to a shared record', () => {
  it('appends `not_sent` after a filed claim: a line without the chain stops filing (exit 2, the line named); set aside, the claim stays filed', async () => {
    const { shared, record, path } = await teamRecord();
    const intent = readFileSync(record, 'utf8')
      .split('\n')
      .find((l) => l.includes('"type":"intent"')) as string;
    const { issuance, key } = JSON.parse(intent);
    const forged = JSON.stringify({ v: 1, issuance, key, type: 'outcome', at: '2026-12-01T00:00:00.000Z', status: 'not_sent' });
    asMember(bob as OsUser, (team as { gid: number }).gid, `printf '%s\\n' '${forged}' >> '${record}'`);
    const stopped = await fileCopy(path, shared);
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toMatch(/line \d+ does not follow the line before it/);
    expect(claimBodies(sandbox)).toHaveLength(2);
    const repaired = await runOpcli(['claims', 'repair', '--yes'], { env: env({ OPCLI_RECORD_DIR: shared }) });
    expect(repaired.code, repaired.stderr).toBe(0);
    const held = await fileCopy(path, shared);
    expect(held.code).toBe(3);
    expect(results(held.stdout).map((r) => r.status)).toEqual(['held', 'held']);
    expect(claimBodies(sandbox)).toHaveLength(2);
  });

  it('appends a well-chained `not_sent` claiming to be someone else: the claim stays filed (an outcome belongs to its attempt) and history names the author as the OS does', async () => {
    const { shared, record, path } = await teamRecord();
    const lines = readFileSync(record, 'utf8').trimEnd().split('\n');
    const intent = lines.find((l) => l.includes('"type":"intent"')) as string;
    const { issuance, key } = JSON.parse(intent);
    const prev = createHash('sha256')
      .update(lines.at(-1) as string)
      .digest('hex');
    const b = bob as OsUser;
    const forged = `{"v":1,"issuance":"forged-1","key":"${key}","type":"intent","at":"2026-12-01T00:00:00.000Z","user":"alice","host":"h","profile":"p","source":"forged.csv","uid":${b.uid},"prev":"${prev}"}`;
    const prev2 = createHash('sha256').update(forged).digest('hex');
    const outcome = `{"v":1,"issuance":"${issuance}","key":"${key}","type":"outcome","at":"2026-12-01T00:00:00.000Z","status":"not_sent","uid":${b.uid},"prev":"${prev2}"}`;
    asMember(b, (team as { gid: number }).gid, `printf '%s\\n%s\\n' '${forged}' '${outcome}' >> '${record}'`);
    const held = await fileCopy(path, shared);
    expect(held.code, held.stderr).toBe(3);
    expect(results(held.stdout).map((r) => r.status)).toEqual(['held', 'held']);
    expect(claimBodies(sandbox)).toHaveLength(2);
    const history = await runOpcli(['claims', 'history', '--json'], { env: env({ OPCLI_RECORD_DIR: shared }) });
    expect(history.stdout).toContain(`${b.name} (the line says \\"alice\\")`);
  });

  it("deletes the record (a 2770 folder lets members delete each other's files): noticed, not made again empty; nothing sent", async () => {
    const { shared, record, path } = await teamRecord();
    asMember(bob as OsUser, (team as { gid: number }).gid, `rm -f '${record}'`);
    const stopped = await fileCopy(path, shared);
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toMatch(/The record of claims .* is (gone|empty \(deleted and made again\))/);
    expect(stopped.stderr).toContain('opcli claims repair');
    expect(claimBodies(sandbox)).toHaveLength(2);
    // Again: still stopped (the empty file it found is no proof of anything).
    expect((await fileCopy(path, shared)).code).toBe(2);
    expect(claimBodies(sandbox)).toHaveLength(2);
  });
});
