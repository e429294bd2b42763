/**
 * The CA file (`ca-file`, OPCLI_CA_FILE) decides which servers opcli trusts with the token, so it is
 * read like the config files (issue 38, row 10): never through a link, never a FIFO or a device,
 * at most a few MiB, and yours or root's, writable by no one else. Before, a file of another user
 * mode 0666 was trusted silently, and /dev/zero, a FIFO or a 2 GB file hung the run (ignoring
 * SIGTERM) or took gigabytes. The runs that could hang are the built binary with a generous kill.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBinary, runOpcli, tempConfigDir } from '../helpers.js';
import { binaryUnreachable, nodeFor, type OsUser, osUsersWhy, otherOsUser } from '../os-users.js';

/** A generous kill for a run that hangs without the fix (before the test's own time-out): the test fails rather than hangs. */
const HANG_KILL_MS = 45_000;
/** The time-out of a test that may wait for that kill. */
const HANG_TEST_MS = 120_000;

let config: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  config = tempConfigDir();
  return () => config.cleanup();
});

/** A real CA certificate in PEM form (one of Node's roots), in a file of this test, mode `mode`. */
function caFile(name: string, mode = 0o644): string {
  const path = join(config.dir, name);
  writeFileSync(path, `${rootCertificates[0]}\n`);
  chmodSync(path, mode);
  return path;
}

/** `orders list` with OPCLI_CA_FILE; nothing is listening at the base URL, nor is anything sent. */
const listWith = (file: string) =>
  runBinary(['orders', 'list'], {
    env: { OPCLI_CONFIG_DIR: config.dir, OPCLI_BASE_URL: 'http://127.0.0.1:9', OPCLI_TOKEN: 'x', OPCLI_CA_FILE: file },
    timeoutMs: HANG_KILL_MS,
  });

describe.runIf(process.platform !== 'win32')('a CA file that is not a small regular file', () => {
  it(
    'a FIFO, a link to /dev/zero, a 64 MiB file: exit 2 at once, naming the file and what it is',
    async () => {
      const fifo = join(config.dir, 'ca.fifo');
      execFileSync('mkfifo', [fifo]);
      const zero = join(config.dir, 'zero.pem');
      symlinkSync('/dev/zero', zero);
      const big = caFile('big.pem', 0o600);
      truncateSync(big, 64 * 1024 * 1024);
      const cases: [string, string][] = [
        [fifo, 'is a named pipe, not a regular file: opcli does not trust it.'],
        [zero, 'is a symbolic link: opcli does not follow links to the files it trusts.'],
        [big, 'is 64 MiB, more than a CA file can be (4 MiB): opcli does not trust it.'],
      ];
      for (const [file, why] of cases) {
        const run = await listWith(file);
        expect(run.signal, `${file}: the run hung and was killed`).toBeNull();
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain(`The CA file ${file} (OPCLI_CA_FILE) ${why}`);
        expect(run.stderr).toContain('OPCLI_CA_FILE');
      }
      const set = await runBinary(['config', 'set', 'ca-file', fifo], { env: { OPCLI_CONFIG_DIR: config.dir }, timeoutMs: HANG_KILL_MS });
      expect(set.code).toBe(2);
      expect(set.stderr).toContain(`The CA file ${fifo} (ca-file) is a named pipe`);
    },
    HANG_TEST_MS,
  );
});

describe.runIf(process.platform !== 'win32')('who may own and write a CA file', () => {
  it('one others can write (0666, 0620) is refused with the chmod that fixes it; yours 0644 is trusted', async () => {
    for (const mode of [0o666, 0o620]) {
      const file = caFile(`loose-${mode.toString(8)}.pem`, mode);
      const set = await runOpcli(['config', 'set', 'ca-file', file], { env: { OPCLI_CONFIG_DIR: config.dir } });
      expect(set.code).toBe(2);
      expect(set.stderr).toContain(`The CA file ${file} (ca-file) can be written by other users (mode 0${mode.toString(8)}): opcli does not trust it.`);
      expect(set.stderr).toContain(`\`chmod go-w ${file}\``);
    }
    const mine = caFile('mine.pem');
    const set = await runOpcli(['config', 'set', 'ca-file', mine], { env: { OPCLI_CONFIG_DIR: config.dir } });
    expect(set.stderr).toContain('Set ca-file');
    expect(set.code).toBe(0);
  });

  describe('owned by another user (an OS user the test creates)', () => {
    const otherUser = otherOsUser('opcli-ca', 'two-user case of test/http/ca-file.test.ts skipped');
    const why = osUsersWhy;

    it.skipIf(why !== undefined)("another user's, mode 0666 or 0644: refused, naming the owner; root's 0644 is trusted by every user", async () => {
      const who = otherUser() as OsUser;
      const theirs = caFile('theirs.pem', 0o666);
      chownSync(theirs, who.uid, who.gid);
      const run = await listWith(theirs);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `The CA file ${theirs} (OPCLI_CA_FILE) is owned by another user (${who.name} (uid ${who.uid}); you are root (uid 0)): opcli does not trust it.`,
      );
      chmodSync(theirs, 0o644);
      expect((await listWith(theirs)).stderr).toContain('is owned by another user');
      // The system's bundles are root's: the other user (running opcli as them) trusts root's file.
      const node = nodeFor(who);
      const unreachable = binaryUnreachable(who, node, BIN);
      if (unreachable) {
        console.warn(`the last step of this case is skipped: ${unreachable}`);
        return;
      }
      const shared = mkdtempSync(join(tmpdir(), 'opcli-ca-root-'));
      const theirConfig = mkdtempSync(join(tmpdir(), 'opcli-ca-config-'));
      try {
        chmodSync(shared, 0o755);
        const roots = join(shared, 'roots.pem');
        writeFileSync(roots, `${rootCertificates[0]}\n`, { mode: 0o644 });
        chownSync(theirConfig, who.uid, who.gid);
        const asThem = spawnSync(node, [BIN, 'config', 'set', 'ca-file', roots], {
          uid: who.uid,
          gid: who.gid,
          env: { PATH: process.env.PATH, HOME: theirConfig, OPCLI_CONFIG_DIR: theirConfig },
          encoding: 'utf8',
          timeout: HANG_KILL_MS,
        });
        expect(asThem.status, asThem.stderr).toBe(0);
        expect(asThem.stderr).toContain('Set ca-file');
      } finally {
        rmSync(shared, { recursive: true, force: true });
        rmSync(theirConfig, { recursive: true, force: true });
      }
    });
  });
});
