/**
 * Issue 40, "upgrade without refiling": the batches an earlier opcli filed (its own build, its
 * journals: test/fixtures/0.2.0 with format version 3, test/fixtures/journal-v2 with version 2) run
 * again by today's built binary send no claim, whether the same file or a copy in another order; the
 * rows a kill -9 left in flight stay uncertain; only rows provably never filed are sent, once;
 * `claims history` lists what the old version filed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { results } from '../claims/fixtures.js';
import { actions, fromFile, oldFiles, opcli, reversedCopy, type Upgraded, upgradeSuite } from './fixture.js';

const SETS = [
  { old: oldFiles('0.2.0'), finished: ['batch-done.csv', 'batch-done.jsonl'], mixed: ['batch-mixed.csv'] },
  { old: oldFiles('journal-v2'), finished: ['batch-done.csv'], mixed: ['batch-mixed.csv'] },
];

/** The `row N` of a claim body the sandbox received (item.details is `<file> row N`). */
const rowOfBody = (body: string) => Number(/ row (\d+)$/.exec(JSON.parse(body).item.details)?.[1]);

describe.each(SETS)('the batches of $old.name run again after the upgrade', ({ old, finished: finishedFiles, mixed: mixedFiles }) => {
  let sandbox: Sandbox;
  let up: Upgraded;
  upgradeSuite(old, (s) => ({ sandbox, up } = s));

  const batches = old.stepsOf('batch');
  const statuses = (s: (typeof batches)[number]) => [...old.journalOf(fromFile(s.argv)).values()].map((e) => e.status);
  /** Every row filed. */
  const finished = batches.filter((s) => statuses(s).every((status) => status === 'filed'));
  /** Rows left in flight by a kill. */
  const killed = batches.filter((s) => statuses(s).includes('sending'));
  /** Rows refused by the API or provably not sent. */
  const mixed = batches.filter((s) => !finished.includes(s) && !killed.includes(s));
  /** The batches whose every row was filed or may have been. */
  const filedOrInFlight = [...finished, ...killed];
  const cases = (steps: typeof batches) => steps.map((s) => [fromFile(s.argv), s.argv] as const);

  /** Runs an old batch command line again with today's binary (on the file `from`), results as JSON lines. */
  async function rerun(argv: string[], from = fromFile(argv)) {
    const res = await opcli(up, [...argv.map((a) => (a === fromFile(argv) ? from : a)), '--jsonl']);
    return { ...res, rows: results(res.stdout) };
  }

  it('the fixtures hold finished batches, one killed with rows in flight, and one with rows refused or not sent', () => {
    expect(finished.map((s) => fromFile(s.argv))).toEqual(finishedFiles);
    expect(killed.map((s) => fromFile(s.argv))).toEqual(['batch-killed.csv']);
    expect(mixed.map((s) => fromFile(s.argv))).toEqual(mixedFiles);
  });

  it.each(cases(finished))('%s, the same file: every row settled earlier with the claim it filed, nothing sent', async (file, argv) => {
    const res = await rerun(argv);
    expect(res.code, res.stderr).toBe(0);
    const journal = old.journalOf(file);
    expect(res.rows).toHaveLength(journal.size);
    for (const row of res.rows) {
      expect(row).toMatchObject({ status: 'filed', earlier: true, sourceOrderId: journal.get(row.line)?.sourceOrderId });
      // The claim the old sandbox held under that id is this file's row.
      expect(old.serverClaim(row.sourceOrderId)).toMatch(new RegExp(`row ${row.line - (file.endsWith('.csv') ? 1 : 0)}$`));
    }
    expect(actions(sandbox)).toEqual([]);
    // Run a second time, the answer is the same and still nothing is sent.
    const again = await rerun(argv);
    expect(again.code, again.stderr).toBe(0);
    expect(again.rows).toEqual(res.rows);
    expect(actions(sandbox)).toEqual([]);
  });

  it.each(cases(finished))('%s, then a copy in reverse order: every row of the copy held as filed, nothing sent', async (file, argv) => {
    expect((await rerun(argv)).code).toBe(0);
    const res = await rerun(argv, reversedCopy(up, file, `sorted-${file}`));
    expect(res.code, res.stderr).toBe(3);
    expect(res.rows).toHaveLength(old.journalOf(file).size);
    for (const row of res.rows) {
      expect(row.status).toBe('held');
      expect(row.error).toContain(`already filed from ${join(up.batches, file)}`);
    }
    expect(actions(sandbox)).toEqual([]);
  });

  it.each(cases(killed))(
    '%s, killed: answered rows settled, rows in flight uncertain and not resent, twice; then a reversed copy is held',
    async (file, argv) => {
      const journal = old.journalOf(file);
      const inFlight = [...journal].filter(([, e]) => e.status === 'sending').map(([line]) => line);
      expect(inFlight.length).toBeGreaterThan(0);
      for (let run = 0; run < 2; run++) {
        // The first run also reclaims the lock the killed run left beside the journal.
        const res = await rerun(argv);
        expect(res.code, res.stderr).toBe(3);
        expect(res.rows).toHaveLength(journal.size);
        for (const row of res.rows) {
          const before = journal.get(row.line);
          if (before?.status === 'filed') expect(row).toMatchObject({ status: 'filed', earlier: true, sourceOrderId: before.sourceOrderId });
          else expect(row).toMatchObject({ status: 'uncertain', earlier: true });
        }
        expect(res.stderr).toContain(`Uncertain from an earlier run (sent, answer never read): lines ${inFlight.join(', ')}.`);
        expect(actions(sandbox)).toEqual([]);
      }
      const copy = await rerun(argv, reversedCopy(up, file, `sorted-${file}`));
      expect(copy.code, copy.stderr).toBe(3);
      expect(copy.rows.map((r) => r.status)).toEqual(Array(journal.size).fill('held'));
      expect(copy.rows.filter((r) => r.error?.includes('already sent (outcome uncertain)'))).toHaveLength(inFlight.length);
      expect(actions(sandbox)).toEqual([]);
    },
  );

  it.each(cases(mixed))('%s: only the rows it provably did not file are sent, each once; filed and refused rows are not', async (file, argv) => {
    const journal = old.journalOf(file);
    const rows = file.endsWith('.csv')
      ? readFileSync(join(old.dir, 'batches', file), 'utf8')
          .trimEnd()
          .split('\n').length - 1
      : 0;
    // A row is resent when its journal says it was not sent, or says nothing (the run stopped before it).
    const expected = Array.from({ length: rows }, (_, i) => i + 1).filter((row) => [undefined, 'not_sent'].includes(journal.get(row + 1)?.status));
    expect(expected.length).toBeGreaterThan(0);
    const res = await rerun(argv);
    expect(res.stderr).toContain('Settled by an earlier run');
    expect(res.rows.filter((r) => !r.earlier).map((r) => [r.line, r.status])).toEqual(expected.map((row) => [row + 1, 'filed']));
    const bodies = sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline').map((r) => r.body);
    expect(bodies.map(rowOfBody).sort((a, b) => a - b)).toEqual(expected);
    for (const row of res.rows.filter((r) => r.earlier)) expect(row.status).toBe(journal.get(row.line)?.status);
    // Run again: now every row is settled, and nothing more is sent.
    sandbox.resetLog();
    const again = await rerun(argv);
    expect(again.rows.every((r) => r.earlier)).toBe(true);
    expect(actions(sandbox)).toEqual([]);
  });

  // Issue 40: a batch run again reads every journal beside its input into the record, so history lists
  // the rows the old version filed, rejected or left in flight in the batches not run again too (batch-mixed's).
  it('claims history lists every row the old version filed or left in flight, once a batch of its folder was run again', async () => {
    for (const step of filedOrInFlight) await rerun(step.argv);
    const res = await opcli(up, ['claims', 'history', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const listed: { status: string; sourceOrderId?: string; source: string; line: number }[] = JSON.parse(res.stdout).claims;
    const expected = [...filedOrInFlight, ...mixed].flatMap((s) =>
      [...old.journalOf(fromFile(s.argv))]
        // CHOICE (docs/spec-choices.md#the-same-batch): a rejected row is read in too (its rerun reports it, as the journal did), so history lists it.
        .filter(([, e]) => e.status !== 'not_sent')
        .map(([line, e]) => ({
          source: join(up.batches, fromFile(s.argv)),
          line,
          status: e.status === 'filed' || e.status === 'rejected' ? e.status : 'uncertain',
          sourceOrderId: e.sourceOrderId,
        })),
    );
    const byPlace = (a: { source: string; line: number }, b: { source: string; line: number }) => a.source.localeCompare(b.source) || a.line - b.line;
    expect(listed.map((c) => ({ source: c.source, line: c.line, status: c.status, sourceOrderId: c.sourceOrderId })).sort(byPlace)).toEqual(
      expected.sort(byPlace),
    );
    expect(actions(sandbox)).toEqual([]);
  });

  /*
   * Met since issue 40's first step (the old versions kept one journal per input file and no record of
   * the store): a batch run reads the journals beside its input into the record of claims, so a copy
   * of an old batch (here in the same folder, as `cp claims.csv "claims (1).csv"`) run before the
   * original is held. Before any batch runs again, nothing says where the old journals are (0.2.0
   * kept a batch's claims only beside its input, no setting names them): `claims history` says so,
   * and `record import` of the journals reads them in (below).
   */
  it.each(cases(filedOrInFlight))('%s copied in reverse order and run before the original sends nothing', async (file, argv) => {
    const res = await rerun(argv, reversedCopy(up, file, `sorted-${file}`));
    expect(actions(sandbox)).toEqual([]);
    expect(res.code).toBe(3);
  });

  it('claims history before any batch runs again names where 0.2.0 kept them; `record import` of the journals lists them, sending nothing', async () => {
    const before = await opcli(up, ['claims', 'history', '--json']);
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout).claims).toEqual([]);
    expect(before.stderr).toContain(
      'Batches filed by opcli 0.2.0 are kept only in the journal beside each input file (FILE.journal.jsonl): `opcli record import FILE.journal.jsonl` reads one into this record, sending nothing.',
    );
    const journals = [...filedOrInFlight, ...mixed].map((s) => `${fromFile(s.argv)}.journal.jsonl`);
    const dry = await opcli(up, ['record', 'import', '--dry-run', ...journals]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse((await opcli(up, ['claims', 'history', '--json'])).stdout).claims).toEqual([]);
    const imported = await opcli(up, ['record', 'import', '--json', ...journals]);
    expect(imported.code, imported.stderr).toBe(0);
    // Every row but those never sent; a refused row is read in too (a batch's resume asks it), and listed as refused.
    const expected = [...filedOrInFlight, ...mixed].flatMap((s) =>
      [...old.journalOf(fromFile(s.argv))]
        .filter(([, e]) => e.status !== 'not_sent')
        .map(([line, e]) => ({
          source: join(up.batches, fromFile(s.argv)),
          line,
          status: e.status === 'filed' || e.status === 'rejected' ? e.status : 'uncertain',
          sourceOrderId: e.sourceOrderId,
        })),
    );
    // The claims it brought: filed or possibly filed.
    expect(JSON.parse(imported.stdout).files.reduce((n: number, f: { added: { claims: number } }) => n + f.added.claims, 0)).toBe(
      expected.filter((e) => e.status !== 'rejected').length,
    );
    expect(dry.stdout).toContain(`journal ${join(up.batches, journals[0]!)}: would add`);
    const after = await opcli(up, ['claims', 'history', '--json']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).not.toContain('0.2.0');
    const listed: { status: string; sourceOrderId?: string; source: string; line: number }[] = JSON.parse(after.stdout).claims;
    const byPlace = (a: { source: string; line: number }, b: { source: string; line: number }) => a.source.localeCompare(b.source) || a.line - b.line;
    expect(listed.map((c) => ({ source: c.source, line: c.line, status: c.status, sourceOrderId: c.sourceOrderId })).sort(byPlace)).toEqual(
      expected.sort(byPlace),
    );
    // Imported twice: nothing new.
    const again = await opcli(up, ['record', 'import', '--json', ...journals]);
    for (const f of JSON.parse(again.stdout).files) expect(f.added.claims).toBe(0);
    expect(actions(sandbox)).toEqual([]);
  });
});
