/**
 * The record of claims (src/claims/record.ts): one per store, shared by every profile, file and
 * journal, so a claim is filed once however a person copies, pastes or reruns it.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { BIN, ROOT, runBinary, runOpcli, sandboxProfile, scriptedPrompter, tempConfigDir } from '../helpers.js';
import { teamRecord } from '../giftcard/fixture.js';
import { claimBodies, claimsSuite, heldSandbox, journalOf, journalOn, onBackend, RECORD_BACKENDS, results, row, rowOf, writeCsv } from './fixtures.js';

// The same claims with the record in files and in the team's PostgreSQL (fixtures.ts RECORD_BACKENDS).
for (const record of RECORD_BACKENDS) {
  describe(onBackend(record), () => {
    let sandbox: Sandbox;
    let dir = '';
    const { env, team } = claimsSuite(
      (s) => {
        ({ sandbox, dir } = s);
      },
      { record },
    );

    /** The claim of `claims template --json`, with a marker of its own in item.details. */
    async function claim(details = 'row 1', overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
      const template = JSON.parse((await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout);
      return { ...template, item: { ...template.item, details }, ...overrides };
    }

    /** The record files of a folder. */
    function recordFiles(folder: string): string[] {
      return readdirSync(folder).filter((n) => /^claims-record-[0-9a-f]{16}\.jsonl$/.test(n));
    }

    describe('batches and the record of claims', () => {
      it('a copy of a filed CSV (claims (1).csv) files nothing again: every row is held, naming the file it was filed from and the date', async () => {
        const path = join(dir, 'claims.csv');
        writeCsv(path, [row(1), row(2), row(3)]);
        expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
        expect(claimBodies(sandbox)).toHaveLength(3);
        const copy = join(dir, 'claims (1).csv');
        copyFileSync(path, copy);
        const res = await runOpcli(['claims', 'file', '--from', copy], { env: env() });
        expect(res.code).toBe(3);
        expect(claimBodies(sandbox)).toHaveLength(3);
        expect(res.stderr).toContain('Filed 0 claims; 0 rejected by the API, 0 invalid (not sent), 0 uncertain, 3 held (not sent)');
        expect(res.stderr).toMatch(
          new RegExp(
            `line 2: already filed from ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line 2 on \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC \\(profile default, user [^,]+, sourceOrderId [^)]+\\); not sent; --allow-duplicates files it`,
          ),
        );
        expect(res.stderr).toContain('--allow-duplicates files them');
        // CHOICE (docs/spec-choices.md#the-same-batch): the same file is the same batch, its rows settled
        // by the record (no journal file to delete); under a new --journal name it is another batch, held by the record.
        const same = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
        expect(same.code).toBe(0);
        expect(results(same.stdout).map((r) => [r.status, r.earlier])).toEqual([
          ['filed', true],
          ['filed', true],
          ['filed', true],
        ]);
        const again = await runOpcli(['claims', 'file', '--from', path, '--journal', join(dir, 'other.journal.jsonl'), '--jsonl'], { env: env() });
        expect(again.code).toBe(3);
        expect(results(again.stdout).map((r) => r.status)).toEqual(['held', 'held', 'held']);
        expect(claimBodies(sandbox)).toHaveLength(3);
        // --allow-duplicates files them, on purpose.
        const forced = await runOpcli(['claims', 'file', '--from', copy, '--allow-duplicates'], { env: env() });
        expect(forced.code).toBe(0);
        expect(claimBodies(sandbox)).toHaveLength(6);
      });

      // The database's side of the same: a journal of 0.2.0 is not copied into it by a run (`opcli record import` does), but read beside it.
      it.skipIf(record === 'file')(
        "a journal of 0.2.0 at the batch's name is read beside the team's database (its rerun sends nothing the journal settled, and writes to no journal), and once imported is the database's",
        async () => {
          const path = join(dir, 'claims.csv');
          writeCsv(path, [row(1), row(2)]);
          expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
          const journal = await journalOn(path, dir, team());
          const before = readFileSync(journal, 'utf8');
          // A team's database that never saw those rows (0.2.0 filed them before the team had one).
          const empty = await teamRecord();
          const rerun = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: { ...env(), ...empty.env(0) } });
          expect(rerun.code, rerun.stderr).toBe(0);
          expect(results(rerun.stdout).map((r) => [r.status, r.earlier])).toEqual([
            ['filed', true],
            ['filed', true],
          ]);
          expect(claimBodies(sandbox)).toHaveLength(2);
          expect(readFileSync(journal, 'utf8')).toBe(before);
          expect(await empty.pg.admin("SELECT count(*) FROM opcli.intents WHERE kind = 'claim'", empty.database)).toBe('0\n');
          // Once `record import` copied it in, the database answers for the batch alone: the journal may go.
          const imported = await runOpcli(['record', 'import', journal], { env: { ...env(), ...empty.env(0) } });
          expect(imported.code, imported.stderr).toBe(0);
          rmSync(journal);
          const after = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: { ...env(), ...empty.env(0) } });
          expect(after.code, after.stderr).toBe(0);
          expect(results(after.stdout).map((r) => [r.status, r.earlier])).toEqual([
            ['filed', true],
            ['filed', true],
          ]);
          expect(claimBodies(sandbox)).toHaveLength(2);
        },
      );

      // File-only by nature: a journal of 0.2.0 is read into the file record; the team's database takes file records by `opcli record import`.
      it.skipIf(record === 'database')(
        'a journal of an earlier version is read into the record on its next run, so a copy of its file files nothing',
        async () => {
          const path = join(dir, 'claims.csv');
          writeCsv(path, [row(1), row(2)]);
          expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
          // Before this version there was no record: only the journal knew (and no witness of a record: src/record/witness.ts).
          journalOf(path);
          for (const name of recordFiles(dir)) rmSync(join(dir, name));
          rmSync(join(dir, 'record-witness'), { recursive: true });
          const rerun = await runOpcli(['claims', 'file', '--from', path], { env: env() });
          expect(rerun.code).toBe(0);
          expect(rerun.stderr).toContain(`now holds the 2 claims the journal ${path}.journal.jsonl shows filed or possibly filed`);
          const again = await runOpcli(['claims', 'file', '--from', path], { env: env() });
          expect(again.stderr).not.toContain('now holds');
          const copy = join(dir, 'claims (1).csv');
          copyFileSync(path, copy);
          const res = await runOpcli(['claims', 'file', '--from', copy], { env: env() });
          expect(res.code).toBe(3);
          expect(res.stderr).toContain(`line 2: already filed from ${path} line 2 on `);
          expect(claimBodies(sandbox)).toHaveLength(2);
        },
      );

      it('a row pasted twice into one file is filed once; the second copy is held until --allow-duplicates', async () => {
        const path = join(dir, 'claims.csv');
        writeCsv(path, [row(1), row(2), row(1)]);
        const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(res.code).toBe(3);
        expect(claimBodies(sandbox).map(rowOf).sort()).toEqual([1, 2]);
        expect(res.stderr).toContain('line 4: the same claim as line 2 of this file (a row repeated); not sent; --allow-duplicates files it');
        expect(res.stderr).toContain('1 held (not sent)');
        const rerun = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(rerun.code).toBe(3);
        expect(claimBodies(sandbox)).toHaveLength(2);
        const allowed = await runOpcli(['claims', 'file', '--from', path, '--allow-duplicates'], { env: env() });
        expect(allowed.code).toBe(0);
        expect(claimBodies(sandbox).map(rowOf).sort()).toEqual([1, 1, 2]);
      });

      it('a row for the same customer e-mail and item sku as a claim filed from another file is held as similar, both shown', async () => {
        const first = join(dir, 'monday.csv');
        writeCsv(first, [row(1, { 'customer.email': 'Bob@Example.com' })]);
        // The record's similarity needs a sku or sourceProductId: the fixture's rows carry neither, so add one.
        writeFileSync(
          first,
          readFileSync(first, 'utf8')
            .replace('customer.email,', 'item.sku,customer.email,')
            .replace(/\nBob@/, '\nK-1,Bob@'),
        );
        expect((await runOpcli(['claims', 'file', '--from', first], { env: env() })).code).toBe(0);
        const second = join(dir, 'tuesday.csv');
        writeCsv(second, [row(7, { 'customer.email': 'bob@example.com' })]);
        writeFileSync(
          second,
          readFileSync(second, 'utf8')
            .replace('customer.email,', 'item.sku,customer.email,')
            .replace(/\nbob@/, '\nk-1,bob@'),
        );
        const res = await runOpcli(['claims', 'file', '--from', second], { env: env() });
        expect(res.code).toBe(3);
        expect(claimBodies(sandbox)).toHaveLength(1);
        expect(res.stderr).toMatch(
          /line 2: looks like the claim filed from .*monday\.csv line 2 on .*earlier Bob@Example\.com, Kettle 1 \(sku K-1\); this one bob@example\.com, Kettle 7 \(sku k-1\)\); not sent; --allow-similar files it/,
        );
      });
    });

    describe('one claim and the record of claims', () => {
      it('claims file --data run twice files once: the second run is refused (exit 3) with the earlier record; --force files it', async () => {
        const path = join(dir, 'claim.json');
        writeFileSync(path, JSON.stringify(await claim()));
        const first = await runOpcli(['claims', 'file', '--data', path], { env: env(), cwd: dir });
        expect(first.code).toBe(0);
        const id = first.stdout.trim();
        const second = await runOpcli(['claims', 'file', '--data', 'claim.json'], { env: env(), cwd: dir });
        expect(second.code).toBe(3);
        expect(second.stderr).toMatch(
          new RegExp(
            `This claim was already filed from --data ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} on \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC \\(profile default, user [^,]+, sourceOrderId ${id}\\)\\. Nothing was sent\\.`,
          ),
        );
        expect(second.stderr).toContain('--force files it again');
        expect(claimBodies(sandbox)).toHaveLength(1);
        // The same claim written again with its fields in another order is the same claim.
        const retyped = await claim();
        const reordered = Object.fromEntries(Object.entries(retyped).reverse());
        writeFileSync(path, JSON.stringify(reordered, null, 2));
        expect((await runOpcli(['claims', 'file', '--data', path], { env: env() })).code).toBe(3);
        const forced = await runOpcli(['claims', 'file', '--data', path, '--force'], { env: env() });
        expect(forced.code).toBe(0);
        expect(claimBodies(sandbox)).toHaveLength(2);
      });

      it('another claim for the same customer (e-mail in any case) and item sku is held as similar, both shown; --force files it', async () => {
        const path = join(dir, 'claim.json');
        writeFileSync(path, JSON.stringify(await claim('first')));
        expect((await runOpcli(['claims', 'file', '--data', path], { env: env() })).code).toBe(0);
        const base = await claim('second time, other words');
        writeFileSync(path, JSON.stringify({ ...base, customer: { email: 'ALICE@example.com' } }));
        const res = await runOpcli(['claims', 'file', '--data', path], { env: env() });
        expect(res.code).toBe(3);
        expect(res.stderr).toMatch(
          /A claim for the same customer and item was already filed from --data .* earlier alice@example\.com, Espresso machine, stainless \(sku ESP-200\); this one ALICE@example\.com, Espresso machine, stainless \(sku ESP-200\)\. Nothing was sent\./,
        );
        expect(claimBodies(sandbox)).toHaveLength(1);
        expect((await runOpcli(['claims', 'file', '--data', path, '--force'], { env: env() })).code).toBe(0);
        expect(claimBodies(sandbox)).toHaveLength(2);
      });

      it('on a terminal the claim is shown and confirmed (default No: nothing sent); --yes skips it; a script is never asked', async () => {
        const path = join(dir, 'claim.json');
        writeFileSync(path, JSON.stringify(await claim()));
        const no = scriptedPrompter({ 'File this claim': false });
        const declined = await runOpcli(['claims', 'file', '--data', path], { env: env(), tty: true, prompter: no });
        expect(declined.code).toBe(1);
        expect(declined.stderr).toContain('The claim to file:\n  customer.email');
        expect(declined.stderr).toMatch(/\n {2}item\.sku +ESP-200\n/);
        expect(no.asked).toEqual(['File this claim for alice@example.com in store store_1001?']);
        expect(claimBodies(sandbox)).toHaveLength(0);
        const yes = scriptedPrompter({});
        const skipped = await runOpcli(['claims', 'file', '--data', path, '--yes'], { env: env(), tty: true, prompter: yes });
        expect(skipped.code).toBe(0);
        expect(yes.asked).toEqual([]);
        expect(claimBodies(sandbox)).toHaveLength(1);
        // A refused claim is refused before anyone is asked.
        const again = scriptedPrompter({});
        expect((await runOpcli(['claims', 'file', '--data', path], { env: env(), tty: true, prompter: again })).code).toBe(3);
        expect(again.asked).toEqual([]);
      });

      it('a batch row filed from --data earlier is held, and claims history lists both kinds with filters and --json', async () => {
        const data = join(dir, 'claim.json');
        writeFileSync(data, JSON.stringify(await claim('row 1')));
        const single = await runOpcli(['claims', 'file', '--data', data], { env: env() });
        expect(single.code).toBe(0);
        const path = join(dir, 'claims.jsonl');
        writeFileSync(path, `${JSON.stringify(await claim('row 1'))}\n${JSON.stringify(await claim('row 2', { customer: { email: 'carol@example.com' } }))}\n`);
        const batch = await runOpcli(['claims', 'file', '--from', path], { env: env() });
        expect(batch.code).toBe(3);
        expect(batch.stderr).toMatch(/line 1: already filed from --data .*claim\.json on /);
        expect(claimBodies(sandbox).map(rowOf).sort()).toEqual([1, 2]);

        const all = await runOpcli(['claims', 'history'], { env: env() });
        expect(all.code).toBe(0);
        const lines = all.stdout
          .trim()
          .split('\n')
          .map((l) => l.split('\t'));
        expect(lines.map((l) => [l[1], l[3]])).toEqual([
          ['filed', 'alice@example.com'],
          ['filed', 'carol@example.com'],
        ]);
        expect(lines[0]?.[2]).toBe(single.stdout.trim());
        const json = JSON.parse((await runOpcli(['claims', 'history', '--email', 'CAROL@example.com', '--json'], { env: env() })).stdout);
        expect(json.claims).toHaveLength(1);
        expect(json.claims[0]).toMatchObject({ status: 'filed', email: 'carol@example.com', source: path, line: 2, profile: 'default' });
        const later = await runOpcli(['claims', 'history', '--since', '2999-01-01'], { env: env() });
        expect(later.stdout).toBe('');
        expect(later.stderr).toContain('No claims recorded for this filter');
        const bad = await runOpcli(['claims', 'history', '--since', 'yesterday-ish'], { env: env() });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain('--since "yesterday-ish" is not a date');
      });
    });

    // File-only by nature: damage is a line of the file record that cannot be read; a database has rows and constraints instead.
    describe.skipIf(record === 'database')('a damaged record of claims', () => {
      /** Files one claim so the record exists, and returns its path. */
      async function seeded(): Promise<string> {
        const data = join(dir, 'seed.json');
        writeFileSync(data, JSON.stringify(await claim('seed')));
        expect((await runOpcli(['claims', 'file', '--data', data], { env: env() })).code).toBe(0);
        const [name] = recordFiles(dir);
        return join(dir, name as string);
      }

      const kinds: [string, string, RegExp][] = [
        ['garbage', 'this is not a record\n', /line 4 is not a record opcli can read/],
        ['NUL bytes', '\u0000\u0000\u0000\u0000\n', /line 4 holds NUL bytes/],
        [
          'a newer version',
          `${JSON.stringify({ v: 2, issuance: 'x', key: 'y', type: 'intent' })}\n`,
          /line 4 was written by a newer version of opcli \(format 2\)/,
        ],
      ];
      for (const [kind, text, words] of kinds) {
        it(`a line of ${kind} stops claims file (--data and --from) before anything is sent, exit 2, naming the file, the line and the repair`, async () => {
          const record = await seeded();
          appendFileSync(record, text);
          const sent = claimBodies(sandbox).length;
          const data = join(dir, 'claim.json');
          writeFileSync(data, JSON.stringify(await claim('new one', { customer: { email: 'dan@example.com' } })));
          const one = await runOpcli(['claims', 'file', '--data', data], { env: env() });
          expect(one.code).toBe(2);
          expect(one.stderr).toContain(`The record of claims ${record} cannot be read:`);
          expect(one.stderr).toMatch(words);
          expect(one.stderr).toMatch(kind === 'a newer version' ? /Upgrade opcli/ : /opcli claims repair/);
          const path = join(dir, 'claims.csv');
          writeCsv(path, [row(9)]);
          const batch = await runOpcli(['claims', 'file', '--from', path], { env: env() });
          expect(batch.code).toBe(2);
          expect(batch.stderr).toMatch(words);
          expect(claimBodies(sandbox)).toHaveLength(sent);
          if (kind === 'a newer version') return;
          // The repair sets the line aside (a copy kept) and filing works again.
          const repair = await runOpcli(['claims', 'repair', '--yes'], { env: env() });
          expect(repair.code).toBe(0);
          expect(repair.stderr).toMatch(/Set 1 line\(s\) aside; the damaged file is kept as .*\.damaged-/);
          expect((await runOpcli(['claims', 'file', '--data', data], { env: env() })).code).toBe(0);
          expect(claimBodies(sandbox)).toHaveLength(sent + 1);
        });
      }

      it('a torn last line is set aside: the claim it names is held as uncertain, never forgotten; other claims file', async () => {
        const record = await seeded();
        const data = join(dir, 'claim.json');
        const torn = await claim('torn');
        writeFileSync(data, JSON.stringify(torn));
        // What a kill during the intent's write leaves: the beginning of the line, naming its claim.
        const { hashOfRobust, robustJson } = await import('../../src/claims/plan.js');
        const { OfflineClaim } = await import('../../src/schemas.js');
        const key = hashOfRobust(robustJson(OfflineClaim.parse(torn)));
        appendFileSync(record, `{"v":1,"issuance":"abc","key":"${key}","type":"intent","at":"2026-`);
        const res = await runOpcli(['claims', 'file', '--data', data], { env: env() });
        expect(res.code).toBe(3);
        expect(res.stderr).toContain(
          'This claim was already sent (outcome uncertain) (line 4 of the record, cut short: its outcome is unknown). Nothing was sent.',
        );
        expect(res.stderr).toContain('look for it in the merchant dashboard');
        const other = join(dir, 'other.json');
        writeFileSync(other, JSON.stringify(await claim('other', { customer: { email: 'erin@example.com' } })));
        expect((await runOpcli(['claims', 'file', '--data', other], { env: env() })).code).toBe(0);
        // The torn line was ended and set aside by that write: it stays uncertain.
        expect(readFileSync(record, 'utf8')).toContain('"type":"set-aside"');
        expect((await runOpcli(['claims', 'file', '--data', data], { env: env() })).code).toBe(3);
      });
    });

    describe('two processes, one claim (built binary)', () => {
      it('from one config folder at once: one files, the other is refused; the sandbox receives one claim', async () => {
        const data = join(dir, 'claim.json');
        writeFileSync(data, JSON.stringify(await claim()));
        const runs = await Promise.all([0, 1].map(() => runBinary(['claims', 'file', '--data', data], { env: env() })));
        expect(runs.map((r) => r.code).sort()).toEqual([0, 3]);
        expect(runs.find((r) => r.code === 3)?.stderr).toContain('This claim was already');
        expect(claimBodies(sandbox)).toHaveLength(1);
      });

      // File-only by nature (this and the next): a record-dir is a folder of the file record.
      it.skipIf(record === 'database')(
        'from two config folders sharing a record-dir: one files, the other is refused, at once and one after the other',
        async () => {
          const other = tempConfigDir();
          const shared = mkdtempSync(join(tmpdir(), 'opcli-records-'));
          try {
            // A team's folder: group-writable is what sharing means.
            chmodSync(shared, 0o2770);
            await sandboxProfile(sandbox, other.dir);
            const data = join(dir, 'claim.json');
            writeFileSync(data, JSON.stringify(await claim()));
            const runs = await Promise.all(
              [dir, other.dir].map((config) => runBinary(['claims', 'file', '--data', data], { env: { OPCLI_CONFIG_DIR: config, OPCLI_RECORD_DIR: shared } })),
            );
            expect(runs.map((r) => r.code).sort()).toEqual([0, 3]);
            expect(claimBodies(sandbox)).toHaveLength(1);
            const later = await runOpcli(['claims', 'file', '--data', data], { env: { OPCLI_CONFIG_DIR: other.dir, OPCLI_RECORD_DIR: shared } });
            expect(later.code).toBe(3);
            expect(claimBodies(sandbox)).toHaveLength(1);
            expect(recordFiles(shared)).toHaveLength(1);
            expect(recordFiles(dir)).toHaveLength(0);
            // Without the setting, the other folder has its own record: the guides say so.
            expect(recordFiles(other.dir)).toHaveLength(0);
          } finally {
            other.cleanup();
            rmSync(shared, { recursive: true, force: true });
          }
        },
      );

      it.skipIf(record === 'database')('a record-dir anyone can write is refused before anything is sent (exit 2, naming the folder and the fix)', async () => {
        const shared = mkdtempSync(join(tmpdir(), 'opcli-records-'));
        try {
          chmodSync(shared, 0o1777);
          const data = join(dir, 'claim.json');
          writeFileSync(data, JSON.stringify(await claim()));
          const res = await runOpcli(['claims', 'file', '--data', data], { env: env({ OPCLI_RECORD_DIR: shared }) });
          expect(res.code).toBe(2);
          expect(res.stderr).toContain(`The record folder ${shared} can be written by every user (mode 01777)`);
          expect(res.stderr).toContain('chmod o-w');
          expect(claimBodies(sandbox)).toHaveLength(0);
          const relative = await runOpcli(['claims', 'file', '--data', data], { env: env({ OPCLI_RECORD_DIR: 'records' }) });
          expect(relative.code).toBe(2);
          expect(relative.stderr).toContain('OPCLI_RECORD_DIR "records" is not an absolute path');
        } finally {
          rmSync(shared, { recursive: true, force: true });
        }
      });
    });

    describe('kill -9 between the request and its outcome (built binary)', () => {
      it('leaves the claim uncertain in the record, never forgotten: the next run refuses it and history says so', async () => {
        const held = await heldSandbox();
        try {
          const data = join(held.dir, 'claim.json');
          writeFileSync(data, JSON.stringify(await claim()));
          // The request is held on arrival (the sandbox's clock never moves), so the kill lands while it is in flight.
          held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', latencyMs: 60_000 }]);
          const child = spawn(process.execPath, [BIN, 'claims', 'file', '--data', data], {
            cwd: ROOT,
            env: { PATH: process.env.PATH, HOME: process.env.HOME, OPCLI_CONFIG_DIR: held.dir, ...team()?.env(0) },
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
          await new Promise<void>((resolve, reject) => {
            const limit = setTimeout(() => reject(new Error('the request never arrived')), 20_000);
            const poll = setInterval(() => {
              if (!claimBodies(held.sandbox).length) return;
              clearInterval(poll);
              clearTimeout(limit);
              child.kill('SIGKILL');
              resolve();
            }, 2);
          });
          expect(await exited).toBe('SIGKILL');
          held.sandbox.setFaults([]);
          const again = await runOpcli(['claims', 'file', '--data', data], { env: { OPCLI_CONFIG_DIR: held.dir, ...team()?.env(0) } });
          expect(again.code).toBe(3);
          expect(again.stderr).toMatch(/This claim was already sent \(outcome uncertain\) from --data .*claim\.json on .*\. Nothing was sent\./);
          expect(claimBodies(held.sandbox)).toHaveLength(1);
          const history = JSON.parse((await runOpcli(['claims', 'history', '--json'], { env: { OPCLI_CONFIG_DIR: held.dir, ...team()?.env(0) } })).stdout);
          expect(history.claims).toHaveLength(1);
          expect(history.claims[0].status).toBe('uncertain');
        } finally {
          await held.close();
        }
      }, 60_000);
    });

    // File-only by nature: a record that moved between folders (a database record has no folder).
    describe.skipIf(record === 'database')('a record that moved (record-dir set, changed or unset)', () => {
      it('filed with the record in the config folder, then `config set record-dir`, then a copy: held, nothing sent; and again after a second move', async () => {
        const path = join(dir, 'claims.csv');
        writeCsv(path, [row(1), row(2)]);
        expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
        const first = mkdtempSync(join(tmpdir(), 'opcli-records-'));
        const second = mkdtempSync(join(tmpdir(), 'opcli-records-'));
        try {
          expect((await runOpcli(['config', 'set', 'record-dir', first], { env: env() })).code).toBe(0);
          const copy = join(dir, 'claims (1).csv');
          copyFileSync(path, copy);
          const moved = await runOpcli(['claims', 'file', '--from', copy, '--jsonl'], { env: env() });
          expect(moved.code).toBe(3);
          expect(results(moved.stdout).map((r) => r.status)).toEqual(['held', 'held']);
          expect(claimBodies(sandbox)).toHaveLength(2);
          // A claim filed in the first record-dir, then record-dir moved again: the first is read too.
          writeCsv(join(dir, 'three.csv'), [row(3)]);
          expect((await runOpcli(['claims', 'file', '--from', join(dir, 'three.csv')], { env: env() })).code).toBe(0);
          expect((await runOpcli(['config', 'set', 'record-dir', second], { env: env() })).code).toBe(0);
          copyFileSync(join(dir, 'three.csv'), join(dir, 'three (1).csv'));
          const again = await runOpcli(['claims', 'file', '--from', join(dir, 'three (1).csv'), '--jsonl'], { env: env() });
          expect(results(again.stdout).map((r) => r.status)).toEqual(['held']);
          // History reads every place as filing does: the three claims filed in the config folder and the
          // first record-dir are listed from the second, oldest first.
          const history = await runOpcli(['claims', 'history', '--json'], { env: env() });
          expect(history.code).toBe(0);
          const listed = (JSON.parse(history.stdout) as { claims: { status: string; item?: string }[] }).claims;
          expect(listed.map((c) => c.status)).toEqual(['filed', 'filed', 'filed']);
          // And with record-dir unset, back in the config folder.
          expect((await runOpcli(['config', 'unset', 'record-dir'], { env: env() })).code).toBe(0);
          copyFileSync(join(dir, 'three.csv'), join(dir, 'three (2).csv'));
          const back = await runOpcli(['claims', 'file', '--from', join(dir, 'three (2).csv'), '--jsonl'], { env: env() });
          expect(results(back.stdout).map((r) => r.status)).toEqual(['held']);
          expect(claimBodies(sandbox)).toHaveLength(3);
        } finally {
          rmSync(first, { recursive: true, force: true });
          rmSync(second, { recursive: true, force: true });
        }
      });
    });
  });
}
