/**
 * A paced batch with many rows waiting for their start at once (--rate 200/s, --concurrency 64):
 * no MaxListenersExceededWarning on stderr (issue 29). Each waiting row listens for Ctrl-C on the
 * batch's stop signal; one listener per slot is expected, not a leak.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { writeRows } from './fixtures.js';

it('a batch at 200 requests/s with 64 slots prints no MaxListenersExceededWarning', async () => {
  const sandbox = await startSandbox({ latencyMs: 80 });
  const cfg = tempConfigDir();
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    await sandboxProfile(sandbox, cfg.dir, { loggedIn: false });
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 400);
    const res = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '64', '--rate', '200/s'], {
      env: { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: sandbox.url, OPCLI_TOKEN: sandbox.issueTokens().access_token },
    });
    expect(res.code).toBe(0);
    // Warnings are emitted on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  } finally {
    process.off('warning', onWarning);
    await sandbox.close();
    cfg.cleanup();
  }
});
