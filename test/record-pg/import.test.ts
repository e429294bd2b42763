/**
 * The database half of `record import` against a real PostgreSQL: a file imported twice adds
 * nothing, a copy of it under another id adds nothing, a file that grew adds its new lines, an
 * attempt of another computer with the same number is kept beside it, and a file whose outcome has
 * no attempt is refused whole.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openRecordDatabase, type RecordDatabase, setupRecord } from '../../src/record-pg/database.js';
import { type ImportChunk, importRecord } from '../../src/record-pg/import.js';
import { ask, insertIntent } from '../../src/record-pg/queries.js';
import { missingInfra, type Postgres, startPostgres } from '../infra/index.js';

const missing = missingInfra('pg_ctl');
const ORIGIN = 'https://api.example.com';

/** A claims file's rows: one run, and for each key an intent (filing `<prefix>-<n>`) and a filed outcome. */
function claimsFile(prefix: string, keys: number[]): ImportChunk {
  return {
    runs: [
      {
        run: `run-${prefix}`,
        origin: ORIGIN,
        storeId: 'st_1',
        source: '/home/ann/claims.csv',
        osUser: 'ann',
        host: 'laptop',
        profile: 'prod',
        at: '2026-11-01T09:00:00Z',
      },
    ],
    intents: keys.map((n) => ({
      kind: 'claim',
      origin: ORIGIN,
      storeId: 'st_1',
      key: `k${n}`,
      filing: `${prefix}-${n}`,
      at: '2026-11-01T09:00:01Z',
      run: `run-${prefix}`,
      line: n + 1,
    })),
    outcomes: keys.map((n) => ({ filing: `${prefix}-${n}`, status: 'filed', at: '2026-11-01T09:00:02Z', sourceOrderId: `SO-${n}` })),
    notes: [{ kind: 'note', origin: ORIGIN, storeId: 'st_1', key: 'k1', message: 'checked by phone', at: '2026-11-02T10:00:00Z' }],
  };
}
async function* once(chunk: ImportChunk): AsyncIterable<ImportChunk> {
  yield chunk;
}

describe.skipIf(missing)('record import into the database', () => {
  let pg: Postgres;
  let record: RecordDatabase;
  const member = { name: `imp_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` };
  let database: string;
  const count = async (table: string) => Number(await pg.admin(`SELECT count(*) FROM opcli.${table}`, database));

  beforeAll(async () => {
    pg = await startPostgres();
    database = `rec_${randomBytes(3).toString('hex')}`;
    await pg.admin(`CREATE DATABASE ${database}`);
    await pg.admin(`CREATE ROLE ${member.name} LOGIN PASSWORD '${member.password}'`);
    await setupRecord({ url: `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, password: pg.superuserPassword }, [member.name], {
      env: {},
      cwd: '/',
    });
    record = await openRecordDatabase(
      { url: `postgresql://${member.name}@127.0.0.1:${pg.port}/${database}`, password: member.password },
      { env: {}, cwd: '/' },
    );
  });
  afterAll(async () => {
    await record?.close();
    await pg?.stop();
  });

  const run = (file: { fileId: string; path: string; lines: number }, chunks: (alreadyIn: number) => AsyncIterable<ImportChunk>) =>
    record.withClient((c) => importRecord(c, file, chunks), 'the import is one transaction: rerunning it is safe');

  test('a file imported twice, or a copy of it from another computer, adds nothing the second time', async () => {
    const file = { fileId: 'file-a', path: '/home/ann/.config/opcli/claims-record-1.jsonl', lines: 10 };
    expect(await run(file, () => once(claimsFile('a', [1, 2, 3])))).toEqual({ alreadyIn: 0, runs: 1, intents: 3, outcomes: 3, notes: 1 });
    expect(await run(file, () => once(claimsFile('a', [1, 2, 3])))).toEqual({ alreadyIn: 10, runs: 0, intents: 0, outcomes: 0, notes: 0 });
    const copy = { ...file, fileId: 'file-a-copied-to-bob', path: '/home/bob/claims-record-1.jsonl' };
    expect(await run(copy, () => once(claimsFile('a', [1, 2, 3])))).toEqual({ alreadyIn: 0, runs: 0, intents: 0, outcomes: 0, notes: 0 });
    expect([await count('intents'), await count('outcomes'), await count('notes')]).toEqual([3, 3, 1]);
    const [k1] = await record.withClient((c) => ask(c, 'byKey', [ORIGIN, 'st_1', 'claim', 'k1']), 'n/a');
    expect(k1).toMatchObject({ attempt: 1, filing: 'a-1', run: 'run-a', line: 2, author: member.name, outcomes: [{ status: 'filed', sourceOrderId: 'SO-1' }] });
  });

  test('a file that grew adds only the lines after those imported', async () => {
    const seen: number[] = [];
    const file = { fileId: 'file-a', path: '/home/ann/.config/opcli/claims-record-1.jsonl', lines: 14 };
    const added = await run(file, (alreadyIn) => {
      seen.push(alreadyIn);
      return once({ intents: claimsFile('a', [4]).intents, outcomes: claimsFile('a', [4]).outcomes });
    });
    expect(seen).toEqual([10]);
    expect(added).toEqual({ alreadyIn: 10, runs: 0, intents: 1, outcomes: 1, notes: 0 });
  });

  test('an attempt of another computer with the same key is kept, as the next attempt, never dropped', async () => {
    // Bob filed k9 from his computer (attempt 1, live); Ann's file also holds k9, under her own filing id.
    await record.withClient(
      (c) => insertIntent(c, { kind: 'claim', origin: ORIGIN, storeId: 'st_1', key: 'k9', attempt: 1, filing: 'bob-9', at: '2026-11-03T00:00:00Z' }),
      'n/a',
    );
    const added = await run({ fileId: 'file-c', path: '/home/ann/c.jsonl', lines: 3 }, () =>
      once({ runs: claimsFile('c', []).runs, intents: claimsFile('c', [9, 9]).intents?.map((i, n) => ({ ...i, filing: `c-9-${n}` })) }),
    );
    expect(added.intents).toBe(2);
    const attempts = await record.withClient((c) => ask(c, 'byKey', [ORIGIN, 'st_1', 'claim', 'k9']), 'n/a');
    expect(attempts.map((a) => [a.attempt, a.filing])).toEqual([
      [1, 'bob-9'],
      [2, 'c-9-0'],
      [3, 'c-9-1'],
    ]);
  });

  test('an outcome whose attempt is nowhere: the whole file is refused, nothing of it kept, and rerunning is safe', async () => {
    const before = [await count('intents'), await count('outcomes'), await count('imports')];
    const broken = run({ fileId: 'file-d', path: '/home/ann/d.jsonl', lines: 5 }, async function* () {
      yield { runs: claimsFile('d', []).runs, intents: claimsFile('d', [20]).intents };
      yield { outcomes: [{ filing: 'no-such-filing', status: 'filed', at: '2026-11-04T00:00:00Z' }] };
    });
    await expect(broken).rejects.toThrow(
      /^Record database 127\.0\.0\.1:\d+\/rec_\w+: the server answered 23503: insert or update on table "outcomes" violates foreign key constraint "outcomes_filing_fkey"; the import is one transaction: rerunning it is safe$/,
    );
    expect([await count('intents'), await count('outcomes'), await count('imports')]).toEqual(before);
  });

  test('two computers importing the same file at once: it goes in once', async () => {
    const other = await openRecordDatabase(
      { url: `postgresql://${member.name}@127.0.0.1:${pg.port}/${database}`, password: member.password },
      { env: {}, cwd: '/' },
    );
    try {
      const file = { fileId: 'file-e', path: '/srv/shared/e.jsonl', lines: 8 };
      const results = await Promise.all(
        [record, other].map((r) => r.withClient((c) => importRecord(c, file, () => once(claimsFile('e', [30, 31, 32]))), 'rerunning is safe')),
      );
      expect(results.map((r) => r.intents).sort()).toEqual([0, 3]);
      expect(Number(await pg.admin("SELECT count(*) FROM opcli.outcomes WHERE filing LIKE 'e-%'", database))).toBe(3);
    } finally {
      await other.close();
    }
  });
});
