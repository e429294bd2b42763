/**
 * `giftcard issue` in a real pseudo-terminal (util-linux `script`), the built binary answering
 * through @inquirer/prompts: each missing field is asked, then the confirmation, then it issues.
 */
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { type Fixture, fixture, giftcardSuite } from './fixture.js';

const hasScript = spawnSync('script', ['--version']).status === 0;

let fx: Fixture | undefined;
giftcardSuite({ scanSecrets: false });

/** Runs `argv` in a pty; each time the screen shows a question's text, types its answer. */
function inPty(argv: string[], env: Record<string, string>, answers: [string, string][]): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve) => {
    const command = [process.execPath, BIN, ...argv].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env } });
    let screen = '';
    let next = 0;
    let seenUpTo = 0;
    child.stdout.on('data', (chunk) => {
      screen += chunk.toString();
      const pending = answers[next];
      if (pending && screen.indexOf(pending[0], seenUpTo) >= 0) {
        seenUpTo = screen.length;
        next++;
        child.stdin.write(`${pending[1]}\r`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen: screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '') });
    });
  });
}

describe.runIf(hasScript)('giftcard issue in a pseudo-terminal', () => {
  it('asks for the missing fields, shows amount with currency and the customer, and issues on yes', async () => {
    fx = await fixture({ triggerDelayMs: null, unset: ['trigger-id'] });
    const r = await inPty(['giftcard', 'issue', '--claim', 'C-300'], fx.env, [
      ['Order number', '1300'],
      ['Amount in USD', '7.25'],
      ["Customer's e-mail", 'carol@example.com'],
      ["Customer's name", 'Carol Example'],
      ['storefront id', ''],
      ['Issue 7.25 USD to Carol Example <carol@example.com>?', 'y'],
    ]);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toMatch(/Amount\s+7\.25 USD/);
    expect(r.screen).toMatch(/Issued 7\.25 USD for claim C-300 to Carol Example <carol@example\.com>/);
    expect(fx.sandbox.counters.creditsPosted.creditApiIssue).toBe(1);
  });

  it('refuses a claim already paid (typed " c-2001") right after the claim id: exit 3, no other question', async () => {
    fx = await fixture({ triggerDelayMs: null, unset: ['trigger-id'] });
    const paid = await fx.run([
      'giftcard',
      'issue',
      '--claim',
      'C-2001',
      '--order',
      '2001',
      '--amount',
      '5',
      '--email',
      'carol@example.com',
      '--name',
      'Carol',
      '--yes',
    ]);
    expect(paid.code, paid.stderr).toBe(0);
    const r = await inPty(['giftcard', 'issue'], fx.env, [['Claim id', ' c-2001']]);
    expect(r.code, r.screen).toBe(3);
    expect(r.screen).toMatch(/Store credit for claim c-2001 was already issued/);
    expect(r.screen).not.toMatch(/Order number/);
    expect(fx.sandbox.counters.creditsPosted.creditApiIssue).toBe(1);
  });
});
