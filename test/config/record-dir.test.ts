/**
 * A team's record-dir (src/config/record-dir.ts, src/core/record-chain.ts, src/core/record-witness.ts):
 * whose folder it may be, who wrote each line, and what a teammate who can write the folder cannot
 * do unseen. The cases run as OS users the test creates (the suite runs as root in CI) and are
 * skipped, with the reason printed, elsewhere.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, row, writeCsv } from '../claims/fixtures.js';

let sandbox: Sandbox;
let dir = '';
const { env } = claimsSuite((s) => {
  ({ sandbox, dir } = s);
});

const why =
  typeof process.getuid !== 'function' || process.getuid() !== 0
    ? 'not running as root'
    : spawnSync('useradd', ['--help']).error
      ? 'useradd is missing'
      : undefined;

/** A user the test made: carol, outside the team; bob, in the team's group. */
interface OsUser {
  name: string;
  uid: number;
  gid: number;
}
let carol: OsUser | undefined;
let bob: OsUser | undefined;
let team: { name: string; gid: number } | undefined;
const folders: string[] = [];

function makeUser(prefix: string, groups: string[] = []): OsUser {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  execFileSync('useradd', ['-M', ...(groups.length ? ['-G', groups.join(',')] : []), name]);
  const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }));
  return { name, uid: id('-u'), gid: id('-g') };
}

beforeAll(() => {
  if (why) {
    console.warn(`two-user cases of test/config/record-dir.test.ts skipped: ${why}`);
    return;
  }
  const name = `opcli-team-${randomBytes(3).toString('hex')}`;
  execFileSync('groupadd', [name]);
  team = { name, gid: Number(execFileSync('getent', ['group', name], { encoding: 'utf8' }).split(':')[2]) };
  carol = makeUser('opcli-carol');
  bob = makeUser('opcli-bob', [name]);
});
afterAll(() => {
  for (const u of [carol, bob]) if (u) execFileSync('userdel', [u.name]);
  if (team) execFileSync('groupdel', [team.name]);
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
