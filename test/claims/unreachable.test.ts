/**
 * A service that cannot be reached (a refused connection): one behaviour whatever the batch size,
 * and for one claim too. Exit 1, one line on stderr saying that nothing was sent and rerunning is
 * safe; and the rerun, once the service listens, files every row once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { deadPort } from '../infra/ports.js';
import { claimBodies, batchByLine, writeRows } from './fixtures.js';

const ONE_LINE =
  /^Error: (No row was filed|The row was not filed|The claim was not filed): the service cannot be reached \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/claims\/offline could not connect \(ECONNREFUSED\)\); nothing was sent, rerunning is safe\.\n$/;

let dir = '';
let cleanup = () => {};
let port = 0;
let token = '';
let sandbox: Sandbox | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = tempConfigDir());
  port = await deadPort();
  // A token of a sandbox that is then closed: the profile is complete, the service refuses connections.
  const issuer = await startSandbox();
  await sandboxProfile(issuer, dir);
  token = issuer.issueTokens().access_token;
  await issuer.close();
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  cleanup();
});

/** A run against the dead port, without real waits between the HTTP core's attempts. */
function run(argv: string[]) {
  return runOpcli(argv, {
    env: { OPCLI_CONFIG_DIR: dir, OPCLI_BASE_URL: `http://127.0.0.1:${port}`, OPCLI_TOKEN: token },
    sleep: async () => {},
  });
}

describe('a service that refuses connections', () => {
  it.each([5, 300])('a batch of %i rows: exit 1, one line, nothing sent; the rerun files each row once', async (rows) => {
    const path = join(dir, 'claims.csv');
    writeRows(path, rows);
    const res = await run(['claims', 'file', '--from', path]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(ONE_LINE);
    expect(res.stdout).toBe('');
    for (const entry of batchByLine(`${path}.journal.jsonl`).values()) expect(entry.status ?? 'not_sent').not.toBe('filed');
    // The service is back on the same address: the same command files every row, once.
    sandbox = await startSandbox({ port });
    await sandboxProfile(sandbox, dir);
    const again = await runOpcli(['claims', 'file', '--from', path], { env: { OPCLI_CONFIG_DIR: dir } });
    expect(again.code, again.stderr).toBe(0);
    expect(claimBodies(sandbox)).toHaveLength(rows);
  });

  it('one row and one claim say the same in one line', async () => {
    const path = join(dir, 'one.csv');
    writeRows(path, 1);
    const batch = await run(['claims', 'file', '--from', path]);
    expect(batch.code).toBe(1);
    expect(batch.stderr).toMatch(ONE_LINE);
    const template = await runOpcli(['claims', 'template', '--json'], { env: { OPCLI_CONFIG_DIR: dir } });
    const data = join(dir, 'claim.json');
    writeFileSync(data, template.stdout);
    const single = await run(['claims', 'file', '--data', data]);
    expect(single.code).toBe(1);
    expect(single.stderr).toMatch(ONE_LINE);
  });

  it('--jsonl keeps a result per row on stdout; stderr is the one error', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 5);
    const res = await run(['claims', 'file', '--from', path, '--jsonl']);
    expect(res.code).toBe(1);
    const lines = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.status)).toEqual(['not_sent', 'not_sent', 'not_sent', 'not_sent', 'not_sent']);
    const errors = res.stderr.trim().split('\n');
    expect(errors).toHaveLength(1);
    expect(JSON.parse(errors[0] as string).error).toMatchObject({ exitCode: 1, message: expect.stringContaining('nothing was sent, rerunning is safe') });
  });
});
