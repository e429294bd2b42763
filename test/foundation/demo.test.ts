import { describe, expect, it } from 'vitest';
import { runOpcli } from '../helpers.js';

describe('opcli demo (npm start)', () => {
  it('runs every step against its own sandbox, in order, without printing a secret', async () => {
    const r = await runOpcli(['demo'], { env: { NO_COLOR: '1' } });
    expect(r.code, r.stderr).toBe(0);
    const steps = [...r.stderr.matchAll(/^Step (\d+) of (\d+): (.*)$/gm)];
    const total = Number(steps[0]?.[2]);
    expect(steps.map((m) => Number(m[1]))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const titles = steps.map((m) => m[3]).join('\n');
    for (const topic of [/Log in/, /orders/i, /variant/i, /session token/i, /claim/i, /batch/i, /store credit/i, /Log out/]) expect(titles).toMatch(topic);
    // Each command is shown before it runs, and the last thing said is the end of the tour.
    expect(r.stderr).toContain('$ opcli auth login');
    expect(r.stderr).toContain('$ opcli claims file --from');
    expect(r.stderr.trimEnd().split('\n').at(-1)).toContain('The tour is over.');
    // Credentials appear masked or not at all.
    expect(r.stdout + r.stderr).not.toMatch(/svc_(at|rt|secret)_[A-Za-z0-9]{4,}/);
  }, 60_000);
});
