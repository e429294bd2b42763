/**
 * The chain of a record's lines (src/record/chain.ts) and the rule of outcomes
 * (src/record/outcome.ts), as properties over families of records.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChainCheck, NO_LINE, rechain, sealText } from '../../src/record/chain.js';
import { LogWriter } from '../../src/record/log.js';
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

/** A record file in a fresh temp folder, open to append (O_APPEND) as each writer opens it. */
function tempRecord(text: string): { path: string; open: () => number; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'opcli-chain-'));
  const path = join(dir, 'record.jsonl');
  writeFileSync(path, text);
  return {
    path,
    open: () => openSync(path, constants.O_RDWR | constants.O_APPEND),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

describe('appends chain after the file’s last line, whoever wrote it', () => {
  // Files whose end the next append must find: lines of 0.2.0, chained ones, blank lines and trailing
  // whitespace after them, lines longer than a read back, multi-byte characters across its edges.
  const long = (n: number) => `{"v":1,"note":"${'é'.repeat(n)}"}`;
  const ends = {
    empty: '',
    blank: '\n \n\t\n',
    'one line of 0.2.0': '{"v":1,"n":0}\n',
    'one line of 0.2.0, trailing spaces': '{"v":1,"n":0}   \n\n',
    'lines of 0.2.0': legacy(4),
    'lines of 0.2.0, blank lines after': `${legacy(3)}\n  \n\n`,
    chained: `${legacy(2)}${sealText(legacy(3), digest(legacy(2))).text}`,
    'chained, then blank lines': `${sealText(legacy(3), NO_LINE).text}\n \n`,
    'a long line of 0.2.0 last': `${legacy(2)}${long(5000)}\n`,
    'a long chained line last': sealText(`{"v":1}\n${long(2047)}\n${long(6001)}\n`, NO_LINE).text,
  };
  for (const [name, start] of Object.entries(ends)) {
    it(`${name}: two writers appending in turn, each on its own open file, leave an intact chain`, () => {
      const file = tempRecord(start);
      const [a, b] = [file.open(), file.open()];
      try {
        const [wa, wb] = [new LogWriter(), new LogWriter()];
        // A, A again (from what it kept), B (reads A's end), A (reads B's end), B, B.
        for (const [i, [w, fd]] of (
          [
            [wa, a],
            [wa, a],
            [wb, b],
            [wa, a],
            [wb, b],
            [wb, b],
          ] as const
        ).entries())
          w.append(fd, `{"v":1,"i":${i}}\n${i % 2 ? long(i * 900) : '{"v":1}'}\n`);
        const text = readFileSync(file.path, 'utf8');
        expect(breaks(text)).toEqual([]);
        expect(text.startsWith(start)).toBe(true);
        // The same lines appended by one writer that reads the end every time: the same bytes.
        const again = tempRecord(start);
        const fd = again.open();
        for (let i = 0; i < 6; i++) new LogWriter().append(fd, `{"v":1,"i":${i}}\n${i % 2 ? long(i * 900) : '{"v":1}'}\n`);
        closeSync(fd);
        expect(readFileSync(again.path, 'utf8')).toBe(text);
        again.cleanup();
      } finally {
        closeSync(a);
        closeSync(b);
        file.cleanup();
      }
    });
  }

  it('a file replaced by another (a repair’s rename) is read again, not taken for the one the writer left', () => {
    const file = tempRecord(legacy(2));
    const w = new LogWriter();
    let fd = file.open();
    w.append(fd, '{"v":1,"i":0}\n');
    closeSync(fd);
    const size = readFileSync(file.path).length;
    // Same size, another last line (the hash the writer kept is not its), another inode.
    const other = readFileSync(file.path, 'utf8').replace('"i":0', '"i":8');
    writeFileSync(`${file.path}.new`, other);
    renameSync(`${file.path}.new`, file.path);
    expect(readFileSync(file.path).length).toBe(size);
    fd = file.open();
    w.append(fd, '{"v":1,"i":1}\n');
    closeSync(fd);
    expect(breaks(readFileSync(file.path, 'utf8'))).toEqual([]);
    file.cleanup();
  });
});
