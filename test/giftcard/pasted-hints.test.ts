/**
 * The hints of the gift card refusals run as pasted (issue 39, row 5): a hint that names a user's
 * value (an order `#1007`, a claim `C 7'1`) is pasted into a real bash and must reach opcli as the
 * same arguments, and find the record it points at.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

/** The arguments bash hands to `opcli` when `command` is pasted, one per element. */
function pastedArgs(command: string): string[] {
  // `opcli` is a shell function here that prints each argument it receives, NUL-terminated.
  const r = spawnSync('bash', ['-c', `opcli() { printf '%s\\0' "$@"; }\n${command}`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

/** The `opcli …` command of a refusal's hint, as printed between backquotes. */
function hintCommand(stderr: string): string {
  const m = /`(opcli giftcard history [^`]*)`/.exec(stderr);
  expect(m, stderr).not.toBeNull();
  return (m as RegExpExecArray)[1] as string;
}

function bonus(order: string): string[] {
  return ['giftcard', 'issue', '--bonus', '--order', order, '--amount', '5', '--email', 'carol@example.com', '--name', 'Carol Example', '--yes'];
}

describe('the hint of a refused repeat credit', () => {
  it('for order #1007 runs as pasted into bash: the # reaches opcli, and the command lists the credit', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    expect((await fx.run(bonus('#1007'))).code).toBe(0);
    const again = await fx.run(bonus('#1007'));
    expect(again.code).toBe(3);
    const command = hintCommand(again.stderr);
    const args = pastedArgs(command);
    expect(args).toEqual(['giftcard', 'history', '--order', '#1007']);
    const listed = await fx.run(args);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/order #1007/);
  });

  it("for a claim id with a space, a quote and a dollar sign the hint's argument arrives whole", async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const claim = "C 7'1$HOME";
    const args = ['giftcard', 'issue', '--claim', claim, '--order', '1', '--amount', '5', '--email', 'carol@example.com', '--name', 'Carol Example', '--yes'];
    expect((await fx.run(args)).code).toBe(0);
    const again = await fx.run(args);
    expect(again.code).toBe(3);
    expect(pastedArgs(hintCommand(again.stderr))).toEqual(['giftcard', 'history', '--claim', claim]);
  });

  it('an uncertain outcome for order #1008 names a history command that runs as pasted', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    fx.sandbox.setFaults([{ method: 'POST', path: '/provider/v2/gift-cards/issue/', phase: 'after', status: 502, count: 1 }]);
    const r = await fx.run(bonus('#1008'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/may or may not have been issued/);
    expect(pastedArgs(hintCommand(r.stderr))).toEqual(['giftcard', 'history', '--order', '#1008']);
  });
});
