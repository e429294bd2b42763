import { PassThrough, Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { createDeps } from '../../src/cli/deps.js';
import { createProgress } from '../../src/text/progress.js';

function depsAt(tty: boolean) {
  let t = 0;
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c) => {
    err += c.toString();
  });
  const deps = createDeps({ stdin: Readable.from([]), stdout: new PassThrough(), stderr, stderrIsTTY: tty, env: {}, cwd: process.cwd(), now: () => t });
  return { deps, tick: (ms: number) => (t += ms), err: () => err };
}

describe('progress line', () => {
  test('on a pipe nothing is drawn, and a line given as a function is never formatted', () => {
    const { deps, err } = depsAt(false);
    const progress = createProgress(deps);
    let formatted = 0;
    for (let i = 0; i < 100; i++) progress.update(() => `${++formatted} orders`, i % 10 === 0);
    progress.done();
    expect(formatted).toBe(0);
    expect(err()).toBe('');
  });

  test('on a terminal a function is called only when the line is redrawn', async () => {
    const { deps, tick, err } = depsAt(true);
    const progress = createProgress(deps, 100);
    let formatted = 0;
    for (let i = 0; i < 50; i++) {
      progress.update(() => `${++formatted} orders`);
      tick(10);
    }
    progress.done();
    await new Promise((resolve) => setImmediate(resolve));
    // 500 ms of updates every 10 ms, redrawn every 100 ms: 5 lines drawn, 5 formatted.
    expect(formatted).toBe(5);
    expect(err().match(/\r\x1b\[2K\d+ orders/g)).toEqual([
      '\r\x1b[2K1 orders',
      '\r\x1b[2K2 orders',
      '\r\x1b[2K3 orders',
      '\r\x1b[2K4 orders',
      '\r\x1b[2K5 orders',
    ]);
  });
});

describe('progress styles', () => {
  test('plain: a sentence every 10 s of the injected clock, the first after 10 s, force not drawing sooner', () => {
    const { deps, tick, err } = depsAt(false);
    const progress = createProgress(deps);
    expect(progress.style).toBe('plain');
    for (let i = 1; i <= 30; i++) {
      tick(1000);
      progress.update(`${i} orders`, true);
    }
    progress.done();
    expect(err()).toBe('10 orders\n20 orders\n30 orders\n');
  });

  test('none draws nothing, and the accessible mode turns a terminal line into sentences', () => {
    const none = depsAt(true);
    none.deps.globals.progress = 'none';
    const p = createProgress(none.deps);
    none.tick(60_000);
    p.update('x', true);
    expect(none.err()).toBe('');
    const accessible = depsAt(true);
    accessible.deps.globals.accessible = true;
    const a = createProgress(accessible.deps);
    accessible.tick(10_000);
    a.update('12 orders');
    a.done();
    expect(accessible.err()).toBe('12 orders\n');
  });

  test('clear takes the line off and the next update draws it again at once', () => {
    const { deps, tick, err } = depsAt(true);
    const progress = createProgress(deps, 100);
    progress.update('1 orders');
    tick(10);
    progress.clear();
    progress.update('2 orders');
    expect(err()).toBe('\r\x1b[2K1 orders\r\x1b[2K\r\x1b[2K2 orders');
  });
});
