import { PassThrough } from 'node:stream';
import { expect, test } from 'vitest';
import { authFinalSteps as finalSteps, authSteps as steps, type TourContext } from '../../src/commands/demo/index.js';
import { createDeps } from '../../src/cli/deps.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { authSuite, get, locationOf } from './util.js';

let sandbox: Sandbox;
let dir: string;
authSuite((s) => ({ sandbox, dir } = s), { sandbox: () => ({ autoApprove: true }), loggedIn: false });

test('the tour logs in through the real PKCE flow, shows the status, and logs out at the end', async () => {
  const ran: { argv: string[]; code: number; stdout: string; stderr: string }[] = [];
  const ctx: TourContext = {
    sandbox,
    configDir: dir,
    deps: createDeps({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: dir }),
    say: () => {},
    async run(argv, options = {}) {
      const res = await runOpcli(argv, {
        env: { OPCLI_CONFIG_DIR: dir, CI: '1' },
        // As the tour's browser: follow the consent page's redirect to the loopback callback.
        openBrowser: async (url) => {
          await get(await locationOf(url));
        },
      });
      ran.push({ argv, code: res.code, stdout: res.stdout, stderr: res.stderr });
      expect(res.code, res.stderr).toBe(options.expectCode ?? 0);
      return res;
    },
  };
  for (const step of [...steps, ...finalSteps]) await step.run(ctx);
  // The tour ends on the logout (no red error as its last word); the status after it is checked here.
  expect(ran.map((r) => r.argv.join(' '))).toEqual(['auth login', 'auth status', 'auth refresh', 'auth logout']);
  expect(ran[1]?.stdout).toContain('Logged in\tyes');
  expect(sandbox.requests.filter((r) => r.path === '/v1/oauth/token').map((r) => JSON.parse(r.body).grant_type)).toEqual([
    'authorization_code',
    'refresh_token',
  ]);
  expect(sandbox.counters.revocations).toBe(2);
  const after = await runOpcli(['auth', 'status'], { env: { OPCLI_CONFIG_DIR: dir, CI: '1' } });
  expect(after.code).toBe(4);
  expect(after.stdout).toContain('Logged in\tno');
});
