/**
 * `giftcard setup` in a real pseudo-terminal at 80 columns, the built binary answering through
 * @inquirer/prompts: Enter on an optional question keeps what is stored and says so, the currency
 * shows its default, no blank line between questions, and the check table wraps the advice its
 * error line points to instead of cutting it.
 */
import { describe, expect, it } from 'vitest';
import { runOpcli } from '../helpers.js';
import { hasScript, inPty } from '../pty.js';
import { type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite({ scanSecrets: false });

describe.runIf(hasScript)('giftcard setup in a pseudo-terminal at 80 columns', () => {
  it('Enter keeps each stored value, said as such; the currency shows USD; nothing is saved', async () => {
    fx = await fixture({ triggerDelayMs: null, unset: ['currency'] });
    const stored = (await runOpcli(['config', 'get', 'trigger-id'], { env: fx.env })).stdout.trim();
    const r = await inPty(['giftcard', 'setup', '--no-check'], { ...fx.env, NO_COLOR: '1' }, [
      ['Provider name', ''],
      ['Provider API address', ''],
      ['Credit API token', ''],
      ['Store domain at the provider', ''],
      ['Trigger workflow', ''],
      ['Trigger execute URL', ''],
      ['gift card address', ''],
      ['Currency of the amounts you issue', ''],
    ]);
    expect(r.code, r.screen).toBe(0);
    // inquirer wraps a question at the terminal's width: read the screen as words.
    const words = r.screen.replace(/\s+/g, ' ');
    expect(words).toContain(`? Trigger workflow id, or its execute URL (Enter keeps the stored one): (${stored})`);
    expect(words).not.toMatch(/Trigger workflow[^?✔]*Enter to skip/);
    expect(words).toContain('? Currency of the amounts you issue: (USD)');
    expect(words).toContain('Enter keeps the value in parentheses.');
    expect(words).not.toContain('brackets');
    // No blank line anywhere between the questions.
    expect(r.screen.replace(/\r/g, '')).not.toMatch(/\n[ \t]*\n/);
    expect(r.screen).not.toMatch(/Saved /);
    expect((await runOpcli(['config', 'get', 'currency'], { env: fx.env })).stdout.trim()).toBe('');
  });

  it('a failed check wraps its advice in the table, whole, within 80 columns', async () => {
    fx = await fixture({ triggerDelayMs: null });
    expect((await runOpcli(['config', 'set', 'shop-url', 'another-shop.example'], { env: fx.env })).code).toBe(0);
    const r = await inPty(['giftcard', 'setup', '--check'], { ...fx.env, NO_COLOR: '1' });
    expect(r.code, r.screen).toBe(1);
    const lines = r.screen.replace(/\r/g, '').split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
    const table = lines.filter((l) => l.startsWith('│'));
    expect(table.join('\n')).not.toContain('…');
    // The DETAIL column's lines of the failed row, joined: the advice the error points to, whole.
    const detail = table
      .filter((l) => !l.includes('CHECK'))
      .map((l) => l.split('│')[3]?.trim())
      .join(' ');
    expect(detail).toMatch(/Store domain not found\. .*shop-url/);
    expect(r.screen).toContain('See the details above');
  });
});
