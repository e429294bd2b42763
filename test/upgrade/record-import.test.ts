/**
 * Issue 42, "moving a team onto it": `opcli record import` copies a file record (0.2.0's ledger and
 * journals, test/fixtures/0.2.0, and lines today's opcli added to them) into the team's record in a
 * real PostgreSQL (test/infra/postgres.ts), once. Shown by what the built binary prints and what the
 * sandbox received: importing twice adds nothing; after the import, every issuance the file record
 * holds, run again from another computer (another HOME and config folder, another member role),
 * sends nothing; a damaged line stops the import before anything is copied.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { setupRecord } from '../../src/record-pg/database.js';
import { runBinary, sandboxProfile, tempConfigDir } from '../helpers.js';
import { missingInfra, type Postgres, startPostgres } from '../infra/index.js';
import { results } from '../claims/fixtures.js';
import { actions, flagOf, fromFile, type OldFiles, oldFiles, opcli, reversedCopy, type Upgraded, upgradeSuite } from './fixture.js';

const missing = missingInfra('pg_ctl');
const old = oldFiles('0.2.0');
const issues = old.stepsOf('issue');
const refused = issues.filter((s) => old.outcomeOf(s.argv).status === 'failed');
const held = issues.filter((s) => !refused.includes(s));

/** The item.details of each claim the sandbox received (`<file> row N`). */
const sent = (sandbox: Sandbox) =>
  sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline').map((r) => JSON.parse(r.body).item.details as string);

/**
 * A PostgreSQL for the describe block it is called in (two member roles), and per test a new
 * database holding the team's record: member `i`'s record-url, with a HOME without ~/.pgpass.
 */
function teamRecord(upOf: () => Upgraded) {
  let pg: Postgres;
  const members = [0, 1].map((i) => ({ name: `imp${i}_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` }));
  beforeAll(async () => {
    pg = await startPostgres();
    for (const m of members) await pg.admin(`CREATE ROLE ${m.name} LOGIN PASSWORD '${m.password}'`);
  });
  afterAll(async () => {
    await pg?.stop();
  });
  return {
    members,
    pgAdmin: (sql: string, database?: string) => pg.admin(sql, database),
    async teamDatabase(): Promise<{ database: string; member(i: number): Record<string, string> }> {
      const database = `imp_${randomBytes(4).toString('hex')}`;
      await pg.admin(`CREATE DATABASE ${database}`);
      await setupRecord(
        { url: `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, password: pg.superuserPassword },
        members.map((m) => m.name),
        { env: {}, cwd: '/' },
      );
      const member = (i: number) => ({
        OPCLI_RECORD_URL: `postgresql://${members[i]!.name}:${members[i]!.password}@127.0.0.1:${pg.port}/${database}`,
        HOME: '/nonexistent',
      });
      return { database, member };
    },
    count: async (database: string, sql: string) => Number(await pg.admin(sql, database)),
    /** `record import` in the old config folder, as a member. */
    importer: (env: Record<string, string>, argv: string[]) =>
      runBinary(['record', 'import', ...argv], { env: { ...upOf().env, ...env }, cwd: upOf().batches }),
  };
}

/** Each row of the old batches that was filed or may have been, as `claims history` lists it. */
/** The rows of 0.2.0's journals the record holds once read in: filed, in flight (uncertain) and rejected. */
function recordedRows(old: OldFiles, up: Upgraded) {
  return old.stepsOf('batch').flatMap((s) =>
    [...old.journalOf(fromFile(s.argv))]
      .filter(([, e]) => e.status === 'filed' || e.status === 'sending' || e.status === 'rejected')
      .map(([line, e]) => ({
        source: join(up.batches, fromFile(s.argv)),
        line,
        status: e.status === 'sending' ? 'uncertain' : e.status,
        sourceOrderId: e.sourceOrderId,
      })),
  );
}

/*
 * The claims rows `record import` copies are the rows the record of claims writes itself
 * (src/record-pg/claims.ts claimIntentRow): a member on another computer, with no journal and no
 * shared folder, finds each by its key, so no batch the file record holds is filed twice.
 */
async function rerunEverywhere(old: OldFiles, sandbox: Sandbox, up: Upgraded, team: ReturnType<typeof teamRecord>): Promise<void> {
  const { teamDatabase, importer, count } = team;
  const batches = old.stepsOf('batch');
  const inRecord = () => recordedRows(old, up);
  // Today's file record on the importing computer: a single claim (0.2.0 kept none), and every batch
  // journal 0.2.0 left read into it, as a batch run again there reads them.
  const journals = batches.map((s) => `${fromFile(s.argv)}.journal.jsonl`);
  const singles = old.stepsOf('single');
  for (const step of singles) {
    const single = await opcli(up, step.argv);
    expect(single.code, single.stderr).toBe(0);
  }
  expect((await opcli(up, ['record', 'import', ...journals])).code).toBe(0);
  const fileHistory = await opcli(up, ['claims', 'history', '--json']);
  expect(fileHistory.code, fileHistory.stderr).toBe(0);
  // Then a crash while filing a row 0.2.0 never sent (batch-mixed's last): its intent cut short, the last line of the record.
  const mixed = 'batch-mixed.csv';
  const [tornLine, tornEntry] = [...old.journalOf(mixed)].findLast(([, e]) => e.status === 'not_sent')!;
  const torn = readFileSync(join(old.dir, 'batches', `${mixed}.journal.jsonl`), 'utf8')
    .split('\n')
    .map((l) => (l ? JSON.parse(l) : {}))
    .find((e) => e.line === tornLine)!.key as string;
  expect(tornEntry.status).toBe('not_sent');
  const record = readdirSync(up.config).find((n) => n.startsWith('claims-record-'))!;
  appendFileSync(join(up.config, record), `{"v":1,"issuance":"torn-claim","key":"${torn}","type":"intent","at":"2026-12`);

  // Imported with the journals named again: the rows they hold are in the record already, once.
  const { database, member } = await teamDatabase();
  const imported = await importer(member(0), ['--json', ...journals]);
  expect(imported.code, imported.stderr).toBe(0);
  // Every row 0.2.0 filed, left in flight or saw rejected, once, and today's single claim.
  expect(await count(database, "SELECT count(*) FROM opcli.intents WHERE kind = 'claim'")).toBe(inRecord().length + singles.length);

  const other = tempConfigDir();
  try {
    await sandboxProfile(sandbox, other.dir);
    const env = { ...member(1), OPCLI_CONFIG_DIR: other.dir, CI: '1' };
    const folder = join(other.dir, 'batches');
    mkdirSync(folder);
    /** A batch on member 2's computer: a copy of the file (no journal beside it), results as JSON lines. */
    const rerun = async (argv: string[], file: string) => {
      const res = await runBinary([...argv.map((a) => (a === fromFile(argv) ? join(folder, file) : a)), '--jsonl'], { env, cwd: folder });
      return { ...res, rows: results(res.stdout) };
    };
    sandbox.resetLog();
    let filedNow = 0;
    for (const step of batches) {
      const file = fromFile(step.argv);
      const journal = old.journalOf(file);
      copyFileSync(join(up.batches, file), join(folder, file));
      const first = await rerun(step.argv, file);
      expect(first.code, `${file}: ${first.stderr}`).toBe(3);
      expect(first.rows.length, file).toBeGreaterThan(0);
      for (const row of first.rows) {
        const before = journal.get(row.line)?.status;
        const what = `${file} line ${row.line}`;
        if (before === 'filed') {
          expect(row.status, what).toBe('held');
          expect(row.error, what).toContain(`already filed from ${join(up.batches, file)}`);
        } else if (before === 'sending') {
          expect(row.status, what).toBe('held');
          expect(row.error, what).toContain('already sent (outcome uncertain)');
        } else if (file === mixed && row.line === tornLine) {
          // The intent cut short on the importing computer may have left: uncertain, never sent again.
          expect(row.status, what).toBe('held');
          expect(row.error, what).toContain('uncertain');
        } else expect(row.status, what).toBe('filed');
      }
      filedNow += first.rows.filter((r) => r.status === 'filed').length;
      // A copy in another order: every row held (those filed just now too), nothing sent.
      const copy = await rerun(step.argv, reversedCopy({ ...up, batches: folder }, file, `sorted-${file}`));
      expect(copy.code, copy.stderr).toBe(3);
      expect(copy.rows.map((r) => r.status)).toEqual(first.rows.map(() => 'held'));
      expect(sent(sandbox)).toHaveLength(filedNow);
    }
    // The single claim today's opcli filed is held too.
    for (const step of singles) {
      const data = flagOf(step.argv, '--data')!;
      copyFileSync(join(up.batches, data), join(folder, data));
      const again = await runBinary(step.argv, { env, cwd: folder });
      expect(again.code, again.stderr).toBe(3);
      expect(again.stderr).toContain('already filed');
    }
    // Only rows 0.2.0 never filed (refused, or never sent) left, each once.
    expect(sent(sandbox)).toHaveLength(filedNow);
    expect(new Set(sent(sandbox)).size).toBe(filedNow);

    // claims history on member 2 lists each imported claim once, as the file record listed it
    // (the rows member 2 filed just now after them); by customer and by order too.
    const history = await runBinary(['claims', 'history', '--json'], { env, cwd: folder });
    expect(history.code, history.stderr).toBe(0);
    const listed: { source: string; line: number; email: string; sourceOrderId?: string }[] = JSON.parse(history.stdout).claims;
    const before: typeof listed = JSON.parse(fileHistory.stdout).claims;
    expect(before).toHaveLength(inRecord().length + singles.length);
    // A claim 0.2.0 saw rejected was filed again just now: its later attempt is member 2's. Every other
    // imported claim is listed as the file record listed it.
    const again = listed.slice(0, before.length);
    before.forEach((c, i) => {
      if ((c as { status?: string }).status === 'rejected') expect((again[i] as { status?: string }).status).toBe('filed');
      else expect(again[i]).toEqual(c);
    });
    expect(listed.slice(before.length).every((c) => c.source.startsWith(folder))).toBe(true);
    const one = before.find((c) => c.sourceOrderId)!;
    for (const filter of [
      ['--email', one.email.toUpperCase()],
      ['--order', one.sourceOrderId!],
    ]) {
      const found = await runBinary(['claims', 'history', ...filter, '--json'], { env, cwd: folder });
      expect(found.code, found.stderr).toBe(0);
      expect(JSON.parse(found.stdout).claims, filter.join(' ')).toContainEqual(one);
    }
  } finally {
    other.cleanup();
  }
}

describe.skipIf(missing)('record import of a file record into PostgreSQL', () => {
  let sandbox: Sandbox;
  let up: Upgraded;
  upgradeSuite(old, (s) => ({ sandbox, up } = s));

  const team = teamRecord(() => up);
  const { teamDatabase, count, importer, pgAdmin, members } = team;

  it('copies the ledger (0.2.0 lines and today’s) and named journals once: --dry-run says what, a second import adds nothing', async () => {
    // Today's opcli pays the credit 0.2.0's provider refused: the ledger then holds lines of both versions.
    const paid = await opcli(up, refused[0]!.argv);
    expect(paid.code, paid.stderr).toBe(0);
    const { database, member } = await teamDatabase();
    const journals = ['batch-done.csv.journal.jsonl', 'batch-killed.csv.journal.jsonl'];

    const dry = await importer(member(0), ['--dry-run', '--json', ...journals]);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout);
    expect(await count(database, 'SELECT count(*) FROM opcli.intents')).toBe(0);

    const res = await importer(member(0), ['--json', ...journals]);
    expect(res.code, res.stderr).toBe(0);
    const done = JSON.parse(res.stdout);
    expect({ ...done, dryRun: true }).toEqual(planned);
    expect(done.files.map((f: { kind: string; added: { intents: number; outcomes: number } }) => [f.kind, f.added.intents, f.added.outcomes])).toEqual([
      // Seven 0.2.0 attempts and today's (C-1006 again), with their outcomes (C-1004's attempt has none).
      ['gift card ledger', 8, 7],
      // Every row of a finished batch; of the killed one, its 4 filed rows and 8 that may have been sent.
      ['journal', 12, 12],
      ['journal', 12, 12],
    ]);
    expect(await count(database, "SELECT count(*) FROM opcli.intents WHERE kind = 'credit'")).toBe(8);
    expect(await count(database, "SELECT count(*) FROM opcli.outcomes WHERE status = 'uncertain'")).toBe(1 + 8);
    expect((await pgAdmin('SELECT DISTINCT author FROM opcli.intents', database)).trim()).toBe(members[0]!.name);

    const again = await importer(member(1), ['--json', ...journals]);
    expect(again.code, again.stderr).toBe(0);
    for (const f of JSON.parse(again.stdout).files) expect(f.added).toEqual({ runs: 0, intents: 0, outcomes: 0, notes: 0 });
    const text = await importer(member(0), journals);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`gift card ledger ${join(up.config, 'giftcard-ledger.jsonl')}: nothing new (its 8 credits are in already)`);
    expect(await count(database, 'SELECT count(*) FROM opcli.intents')).toBe(8 + 24);
    expect(actions(sandbox)).toEqual(['POST /provider/v2/gift-cards/issue/']);
  });

  it('copies today’s record of claims (a batch run on the file record: its run, its rows, the old journals it read in) once', async () => {
    // Its refused row (3) says so in the exit code; its rows never sent before are filed now.
    const batch = await opcli(up, ['claims', 'file', '--from', 'batch-mixed.csv', '--jsonl']);
    expect(batch.code, batch.stderr).toBe(3);
    const filedNow = actions(sandbox).length;
    expect(filedNow).toBeGreaterThan(0);
    const { database, member } = await teamDatabase();
    const res = await importer(member(0), ['--json']);
    expect(res.code, res.stderr).toBe(0);
    const [claims, ledger] = JSON.parse(res.stdout).files;
    expect([claims.kind, ledger.kind]).toEqual(['claims record', 'gift card ledger']);
    expect(claims.path).toMatch(/claims-record-[0-9a-f]{16}\.jsonl$/);
    // The rows this run filed, and every row of the four old journals it read in that was filed or may
    // have been, and the one the service refused (read in for a batch's resume: its rerun sends it not).
    expect(claims.added).toMatchObject({ runs: 1, intents: filedNow + 12 + 8 + 12 + 3 + 1, outcomes: filedNow + 12 + 8 + 12 + 3 + 1 });
    expect(await count(database, "SELECT count(*) FROM opcli.intents WHERE kind = 'claim' AND run IS NOT NULL")).toBe(filedNow);
    const again = await importer(member(1), ['--json']);
    for (const f of JSON.parse(again.stdout).files) expect(f.added).toEqual({ runs: 0, intents: 0, outcomes: 0, notes: 0 });
  });

  it('after the import, every issuance run again from another computer as another member sends nothing', async () => {
    const { member } = await teamDatabase();
    expect((await importer(member(0), [])).code).toBe(0);
    const other = tempConfigDir();
    try {
      await sandboxProfile(sandbox, other.dir);
      const env = { ...member(1), OPCLI_CONFIG_DIR: other.dir, CI: '1' };
      await runBinary(['config', 'unset', 'trigger-id'], { env });
      sandbox.resetLog();
      for (const step of held) {
        const res = await runBinary(step.argv, { env });
        expect(res.code, `${step.name}: ${res.stderr}`).toBe(3);
        expect(res.stderr).toMatch(/was already issued|has no recorded outcome|ended with an unknown outcome/);
      }
      expect(actions(sandbox)).toEqual([]);
      // The one 0.2.0's provider refused paid nothing: it is issued, once, from there.
      for (const step of refused) {
        expect((await runBinary(step.argv, { env })).code).toBe(0);
        expect((await runBinary(step.argv, { env })).code).toBe(3);
      }
      expect(actions(sandbox)).toEqual(['POST /provider/v2/gift-cards/issue/']);
    } finally {
      other.cleanup();
    }
  });

  it('after the import, every imported batch and claim run again from another computer as another member files nothing twice', () =>
    rerunEverywhere(old, sandbox, up, team));

  it('a damaged line stops the import naming the file, the line and its byte, before anything is copied', async () => {
    const { database, member } = await teamDatabase();
    const ledger = join(up.config, 'giftcard-ledger.jsonl');
    const lines = readFileSync(ledger, 'utf8').split('\n');
    const byte = Buffer.byteLength(lines.slice(0, 3).join('\n')) + 1;
    lines[3] = '{"v":1,"this is not a record';
    writeFileSync(ledger, lines.join('\n'));
    const res = await importer(member(0), ['batch-done.csv.journal.jsonl']);
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain(`The gift card ledger ${ledger} cannot be read: line 4 is not a record opcli can read.`);
    expect(res.stderr).toContain(`Line 4 starts at byte ${byte} of the file.`);
    expect(res.stderr).toContain('opcli giftcard repair');
    expect(await count(database, 'SELECT count(*) FROM opcli.intents')).toBe(0);
    expect(await count(database, 'SELECT count(*) FROM opcli.imports')).toBe(0);
  });

  it('a last line cut short (a crash while paying) is copied as an uncertain credit: its claim is then held on every computer', async () => {
    const { database, member } = await teamDatabase();
    const ledger = join(up.config, 'giftcard-ledger.jsonl');
    writeFileSync(
      ledger,
      `${readFileSync(ledger, 'utf8')}{"v":1,"issuance":"torn-1","key":"shop:sandbox-store.example|store:store_1001|claim:c-1010","at":"2026-12`,
    );
    const res = await importer(member(0), ['--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).files[0].added.notes).toBe(1);
    expect((await pgAdmin("SELECT key || ' ' || message FROM opcli.notes WHERE kind = 'set-aside'", database)).trim()).toBe(
      'shop:sandbox-store.example|store:store_1001|claim:c-1010 line 14 was cut short by an interrupted write',
    );
    const again = await importer(member(0), ['--json']);
    expect(JSON.parse(again.stdout).files[0].added.notes).toBe(0);
    const other = tempConfigDir();
    try {
      await sandboxProfile(sandbox, other.dir);
      sandbox.resetLog();
      const argv = ['giftcard', 'issue', '--claim', 'C-1010', '--order', '1010', '--amount', '9.00', '--email', 'fay@example.com', '--name', 'Fay', '--yes'];
      const held = await runBinary(argv, { env: { ...member(1), OPCLI_CONFIG_DIR: other.dir, CI: '1' } });
      expect(held.code, held.stderr).toBe(3);
      expect(actions(sandbox)).toEqual([]);
    } finally {
      other.cleanup();
    }
  });

  it('without a record-url, a journal that is not there: exit 2, nothing read', async () => {
    const none = await runBinary(['record', 'import'], { env: up.env, cwd: up.batches });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('has no record-url: there is no database to import into');
    const { member } = await teamDatabase();
    rmSync(join(up.batches, 'batch-done.csv.journal.jsonl'));
    const typo = await importer(member(0), ['batch-done.csv.journal.jsonl']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('batch-done.csv.journal.jsonl: no such journal.');
  });
});

describe.skipIf(missing)('record import of the journals of format 2 (test/fixtures/journal-v2)', () => {
  const v2 = oldFiles('journal-v2');
  let sandbox: Sandbox;
  let up: Upgraded;
  upgradeSuite(v2, (s) => ({ sandbox, up } = s));
  const team = teamRecord(() => up);

  it('after the import, every imported batch run again from another computer as another member files nothing twice', () =>
    rerunEverywhere(v2, sandbox, up, team));
});
