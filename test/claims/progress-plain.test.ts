/**
 * A batch in a CI log (stderr not a terminal): a plain status sentence every 10 s of the run's clock
 * instead of silence until the summary; nothing with --progress none.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimsSuite, writeRows } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

/** A clock that moves 3 s at every reading: a batch of a few dozen rows lasts minutes of its time. */
function slowClock() {
  let t = 2_000_000;
  return { now: () => (t += 3000), sleep: async (ms: number) => void (t += ms) };
}

const statusSentences = (stderr: string) => stderr.split('\n').filter((l) => /^\d+\/~?\d+ rows · \d+ filed · .*rows\/s/.test(l));

it('claims file --from in a log writes status sentences, whole (not cut to a width), without redrawing', async () => {
  const path = join(dir, 'claims.csv');
  writeRows(path, 40);
  const r = await runOpcli(['claims', 'file', '--from', path], { env: env(), ...slowClock() });
  expect(r.code, r.stderr).toBe(0);
  const lines = statusSentences(r.stderr);
  expect(lines.length).toBeGreaterThan(1);
  expect(r.stderr).not.toContain('\r');
  expect(r.stderr).not.toContain('\x1b[');
  expect(r.stderr).toContain('Filed 40 claims');
  expect(sandbox.claims.length).toBeGreaterThanOrEqual(40);
});

it('--progress none leaves only the notices and the summary', async () => {
  const path = join(dir, 'claims.csv');
  writeRows(path, 40);
  const r = await runOpcli(['claims', 'file', '--from', path, '--progress', 'none'], { env: env(), ...slowClock() });
  expect(r.code, r.stderr).toBe(0);
  expect(statusSentences(r.stderr)).toEqual([]);
  expect(r.stderr).toContain('Filed 40 claims');
});
