/**
 * A batch journal under the one damage policy of a record of actions (src/record/damage.ts): a
 * damaged line stops the run (exit 2, the line and its byte named, the repair named), `claims repair
 * --journal` sets it aside with a copy, a torn last line is passed over by every run after it, and a
 * `set-aside` line naming a row holds that row as uncertain.
 */
import { existsSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournalReader } from '../../src/claims/journal.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, journalOn, onBackend, RECORD_BACKENDS, writeRows } from './fixtures.js';

// The journal is a file whatever holds the record of claims: the same damage, with the record in files and in PostgreSQL.
for (const record of RECORD_BACKENDS) {
  describe(onBackend(record), () => {
    let sandbox: Sandbox;
    let dir: string;
    const { env, team } = claimsSuite((s) => ({ sandbox, dir } = s), { record });

    describe('a damaged journal', () => {
      it('stops the run naming the line, its byte and the repair; `claims repair --journal` sets it aside with a copy; nothing is filed twice', async () => {
        const input = join(dir, 'claims.csv');
        writeRows(input, 3);
        expect((await runOpcli(['claims', 'file', '--from', input], { env: env() })).code).toBe(0);
        // This version writes no journal: the one 0.2.0 would have written of that run.
        const journal = await journalOn(input, dir, team());
        const lines = readFileSync(journal, 'utf8').split('\n');
        const key = /^\{"key":"([0-9a-f]{16,})"/.exec(lines[2] as string)?.[1] as string;
        expect(key).toMatch(/^[0-9a-f]{16,}$/);
        lines[2] = `{"key":"${key}","li`;
        const damaged = lines.join('\n');
        writeFileSync(journal, damaged);
        const byte = Buffer.byteLength(`${lines[0]}\n${lines[1]}\n`);

        const stopped = await runOpcli(['claims', 'file', '--from', input], { env: env() });
        expect(stopped.code).toBe(2);
        expect(stopped.stderr).toContain(`The journal ${journal} cannot be read: line 3 is not a record opcli can read.`);
        expect(stopped.stderr).toContain(`Line 3 starts at byte ${byte} of the file.`);
        expect(stopped.stderr).toContain(`opcli claims repair --journal ${journal}`);
        expect(claimBodies(sandbox)).toHaveLength(3);

        const repaired = await runOpcli(['claims', 'repair', '--journal', journal, '--yes', '--json'], { env: env() });
        expect(repaired.code).toBe(0);
        const out = JSON.parse(repaired.stdout);
        expect(out).toMatchObject({ journal, repaired: true, lines: [{ line: 3, kind: 'garbage', key }] });
        expect(readFileSync(out.copy, 'utf8')).toBe(damaged);
        const now = readFileSync(journal, 'utf8').split('\n');
        expect(now).toHaveLength(lines.length);
        expect(JSON.parse(now[2] as string)).toMatchObject({ type: 'set-aside', line: 3, key });

        const again = await runOpcli(['claims', 'file', '--from', input], { env: env() });
        expect(again.code).toBe(0);
        expect(claimBodies(sandbox)).toHaveLength(3);
        const clean = await runOpcli(['claims', 'repair', '--journal', journal, '--yes'], { env: env() });
        expect(clean.code).toBe(0);
        expect(clean.stderr).toContain(`The journal ${journal} has no damaged line: nothing to repair.`);
      });

      it("a damaged first line is set aside as a header of the profile's store, so the rows after it stay filed; a newer format is never set aside", async () => {
        const input = join(dir, 'claims.csv');
        writeRows(input, 2);
        expect((await runOpcli(['claims', 'file', '--from', input], { env: env() })).code).toBe(0);
        // This version writes no journal: the one 0.2.0 would have written of that run.
        const journal = await journalOn(input, dir, team());
        const lines = readFileSync(journal, 'utf8').split('\n');
        const header = JSON.parse(lines[0] as string);
        writeFileSync(journal, ['\u0000\u0000\u0000', ...lines.slice(1)].join('\n'));
        const stopped = await runOpcli(['claims', 'file', '--from', input], { env: env() });
        expect(stopped.code).toBe(2);
        expect(stopped.stderr).toContain('line 1 holds NUL bytes');
        const repaired = await runOpcli(['claims', 'repair', '--journal', journal, '--yes'], { env: env() });
        expect(repaired.code).toBe(0);
        expect(repaired.stderr).toContain('Set 1 line(s) aside');
        expect(JSON.parse(readFileSync(journal, 'utf8').split('\n')[0] as string)).toMatchObject({
          journal: 'opcli claims',
          version: 3,
          service: header.service,
        });
        const again = await runOpcli(['claims', 'file', '--from', input], { env: env() });
        expect(again.code).toBe(0);
        expect(again.stderr).toContain('not sent again: 2 filed');
        expect(claimBodies(sandbox)).toHaveLength(2);

        writeFileSync(journal, `${JSON.stringify({ ...header, version: 4 })}\n${lines.slice(1).join('\n')}`);
        const newer = await runOpcli(['claims', 'file', '--from', input], { env: env() });
        expect(newer.code).toBe(2);
        expect(newer.stderr).toContain('line 1 was written by a newer version of opcli (format 4)');
        expect(newer.stderr).toContain('Upgrade opcli');
        const refused = await runOpcli(['claims', 'repair', '--journal', journal, '--yes'], { env: env() });
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('written by a newer version of opcli');
        expect(claimBodies(sandbox)).toHaveLength(2);
      });

      it('a torn last line is passed over by the run after it and by every later run', async () => {
        const input = join(dir, 'claims.csv');
        writeRows(input, 2);
        expect((await runOpcli(['claims', 'file', '--from', input], { env: env() })).code).toBe(0);
        // This version writes no journal: the one 0.2.0 would have written of that run.
        const journal = await journalOn(input, dir, team());
        appendFileSync(journal, '{"key":"ab');
        writeRows(input, 3);
        const second = await runOpcli(['claims', 'file', '--from', input], { env: env() });
        expect(second.code).toBe(0);
        expect(claimBodies(sandbox)).toHaveLength(3);
        writeRows(input, 4);
        const third = await runOpcli(['claims', 'file', '--from', input], { env: env() });
        expect(third.code).toBe(0);
        expect(claimBodies(sandbox)).toHaveLength(4);
        // No run writes to a journal any more: the torn line stays as it was, passed over each time.
        expect(readFileSync(journal, 'utf8').endsWith('{"key":"ab')).toBe(true);
      });

      it('a row a set-aside line names is held as uncertain; a journal without a header is damage at line 1, not "nothing filed"', async () => {
        const path = join(dir, 'j.jsonl');
        const at = '2026-12-07T10:00:00.000Z';
        const key = 'c'.repeat(64);
        const header = JSON.stringify({ journal: 'opcli claims', version: 3, created: at, service: { origin: null, storeId: null } });
        writeFileSync(
          path,
          `${header}\n${JSON.stringify({ v: 1, issuance: 'damaged-line-2', key, type: 'set-aside', at, user: 'u', line: 2, reason: 'x' })}\n`,
        );
        const journal = await JournalReader.snapshot(path);
        try {
          expect(journal.priorOutcome(key)?.status).toBe('uncertain');
        } finally {
          await journal.closeReader();
        }
        writeFileSync(path, '{"some":"thing"}\n');
        await expect(JournalReader.snapshot(path)).rejects.toThrow(`The journal ${path} cannot be read: line 1 is not a record opcli can read.`);
        expect(existsSync(path)).toBe(true);
      });
    });
  });
}
