/**
 * The chain of a record's lines (src/record/chain.ts) and the rule of outcomes
 * (src/record/outcome.ts), as properties over families of records.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ChainCheck, NO_LINE, rechain, sealText } from '../../src/record/chain.js';
import { actOn, claimWeight, endAttempt, type Standing, startAttempt } from '../../src/record/outcome.js';

/** The chain damage of a file's text, by line number. */
function breaks(text: string): number[] {
  const check = new ChainCheck();
  const out: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const d = check.take(line, i + 1);
    if (d) out.push(d.line);
  });
  return out;
}

const legacy = (n: number) => Array.from({ length: n }, (_, i) => `{"v":1,"n":${i}}\n`).join('');
const digest = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the chain', () => {
  for (const old of [0, 1, 5]) {
    for (const added of [1, 2, 7]) {
      it(`${old} line(s) of 0.2.0 then ${added} chained: intact; any line removed, changed or moved breaks it`, () => {
        const before = legacy(old);
        const sealed = sealText(legacy(added).replaceAll('"n"', '"m"'), old ? digest(before) : NO_LINE).text;
        const text = before + sealed;
        expect(breaks(text)).toEqual([]);
        const lines = text.trimEnd().split('\n');
        for (let i = 0; i < lines.length - 1; i++) {
          const removed = [...lines.slice(0, i), ...lines.slice(i + 1)].join('\n');
          // Removing the last line of 0.2.0 before the chain, or any line after it, is seen.
          if (i >= old - 1 || old === 0) expect(breaks(removed).length, `line ${i + 1} removed`).toBeGreaterThan(0);
          const changed = lines.map((l, j) => (j === i ? l.replace('}', ',"x":1}') : l)).join('\n');
          if (i >= old - 1 || old === 0) expect(breaks(changed).length, `line ${i + 1} changed`).toBeGreaterThan(0);
        }
        // A line of 0.2.0 appended after the chain began breaks it.
        expect(breaks(`${text}{"v":1,"late":true}\n`)).toEqual([lines.length + 1]);
        // Chained again after a line is replaced (repair), it reads intact.
        const replaced = lines.map((l, j) => (j === Math.floor(lines.length / 2) ? '{"v":1,"type":"set-aside"}' : l));
        expect(breaks(rechain(replaced).join('\n'))).toEqual([]);
      });
    }
  }
});

describe('an outcome belongs to its attempt', () => {
  type S = 'sending' | 'filed' | 'rejected' | 'uncertain' | 'not_sent';
  const outcomes: S[] = ['filed', 'rejected', 'uncertain', 'not_sent'];
  /** Every sequence of up to three lines (a new attempt, or an outcome of attempt 1 or 2). */
  const steps: { kind: 'start' | 'end'; state: S; attempt: number }[] = [
    { kind: 'start', state: 'sending', attempt: 2 },
    ...outcomes.flatMap((state) => [1, 2].map((attempt) => ({ kind: 'end' as const, state, attempt }))),
  ];
  for (const a of steps)
    for (const b of steps) {
      it(`after filed: ${a.kind} ${a.state} (attempt ${a.attempt}), then ${b.kind} ${b.state} (attempt ${b.attempt}): still filed`, () => {
        let s: Standing<S> | undefined = endAttempt(startAttempt<S>(undefined, 'sending', 1, claimWeight), 'filed', 1, claimWeight);
        for (const step of [a, b])
          s = step.kind === 'start' ? startAttempt(s, step.state, step.attempt, claimWeight) : endAttempt(s, step.state, step.attempt, claimWeight);
        expect(actOn(s as Standing<S>, 'uncertain', claimWeight)).toBe('filed');
      });
    }
  it('an attempt that may have filed keeps its key uncertain when a later attempt is refused', () => {
    let s = startAttempt<S>(undefined, 'sending', 1, claimWeight);
    s = startAttempt(s, 'sending', 2, claimWeight);
    s = endAttempt(s, 'rejected', 2, claimWeight) as Standing<S>;
    expect(actOn(s, 'uncertain', claimWeight)).toBe('uncertain');
    // Its own later refusal settles it: nothing was filed.
    const once = endAttempt(startAttempt<S>(undefined, 'sending', 1, claimWeight), 'rejected', 1, claimWeight) as Standing<S>;
    expect(actOn(once, 'uncertain', claimWeight)).toBe('rejected');
    // A second outcome of one attempt only raises it.
    expect(actOn(endAttempt(once, 'not_sent', 1, claimWeight) as Standing<S>, 'uncertain', claimWeight)).toBe('rejected');
    expect(actOn(endAttempt(once, 'filed', 1, claimWeight) as Standing<S>, 'uncertain', claimWeight)).toBe('filed');
  });
});
