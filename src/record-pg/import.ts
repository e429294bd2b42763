/**
 * The database half of `opcli record import`: one file is one transaction under an advisory lock, so
 * two members importing at once, or an import cut short, never leave half a file or a row twice. An
 * intent already there (its filing id) is skipped, a new one takes the next free attempt of its key
 * (never dropped for another computer's same number); an outcome or note already there is skipped;
 * opcli.imports counts a file's lines in. Each chunk is one statement a table, its rows one JSON parameter.
 */
import type { ClientBase } from 'pg';
import { type IntentRow, inTransaction, type OutcomeRow } from './queries.js';

export interface RunRow {
  run: string;
  origin: string;
  storeId: string;
  source: string;
  journal?: string;
  journalId?: string;
  osUser?: string;
  host?: string;
  profile?: string;
  at: string;
}

export interface NoteRow {
  kind: 'warning' | 'set-aside' | 'note';
  filing?: string;
  origin: string;
  storeId: string;
  key?: string;
  message: string;
  osUser?: string;
  at: string;
  detail?: Record<string, unknown>;
}

/** Rows of a file, in its order (an outcome after its intent, an intent after its run). */
export interface ImportChunk {
  runs?: RunRow[];
  intents?: Omit<IntentRow, 'attempt'>[];
  outcomes?: OutcomeRow[];
  notes?: NoteRow[];
}

/** Which file: a stable id (its header, hashed), where it was read, and how many of its lines the chunks cover. */
export interface ImportedFile {
  fileId: string;
  path: string;
  lines: number;
}

export interface ImportCounts {
  alreadyIn: number;
  runs: number;
  intents: number;
  outcomes: number;
  notes: number;
}

/** The advisory lock every import takes: imports are rare, so they go one at a time. */
const IMPORT_LOCK = 0x6f70636c6a;

const RUNS = `INSERT INTO opcli.runs (run, origin, store_id, source, journal, journal_id, os_user, host, profile, at)
  SELECT run, origin, "storeId", source, journal, "journalId", "osUser", host, profile, at
    FROM jsonb_to_recordset($1::jsonb) AS t(run text, origin text, "storeId" text, source text, journal text, "journalId" text,
                                             "osUser" text, host text, profile text, at timestamptz)
  ON CONFLICT (run) DO NOTHING`;

const INTENTS = `WITH incoming AS (
    SELECT DISTINCT ON (t.filing) t.*
      FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (kind text, origin text, "storeId" text, key text, filing text, at timestamptz,
             run text, source text, line integer, "osUser" text, host text, profile text, similarity text, "customerEmail" text,
             "customerId" text, item text, "amountCents" bigint, currency text, forced boolean, detail jsonb)) WITH ORDINALITY
           AS t(kind, origin, "storeId", key, filing, at, run, source, line, "osUser", host, profile, similarity, "customerEmail",
                "customerId", item, "amountCents", currency, forced, detail, ord)
     WHERE NOT EXISTS (SELECT 1 FROM opcli.intents x WHERE x.filing = t.filing)
     ORDER BY t.filing, t.ord)
  INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, run, source, line, os_user, host, profile, similarity,
                             customer_email, customer_id, item, amount_cents, currency, forced, detail)
  SELECT i.kind, i.origin, i."storeId", i.key,
         coalesce((SELECT max(x.attempt) FROM opcli.intents x
                    WHERE x.origin = i.origin AND x.store_id = i."storeId" AND x.kind = i.kind AND x.key = i.key), 0)
           + row_number() OVER (PARTITION BY i.origin, i."storeId", i.kind, i.key ORDER BY i.ord),
         i.filing, i.at, i.run, i.source, i.line, i."osUser", i.host, i.profile, i.similarity, i."customerEmail", i."customerId", i.item,
         i."amountCents", i.currency, coalesce(i.forced, false), coalesce(i.detail, '{}')
    FROM incoming i ORDER BY i.ord`;

const OUTCOMES = `INSERT INTO opcli.outcomes (filing, status, at, source_order_id, card_id, path, error, detail)
  SELECT DISTINCT ON (t.filing, t.status, t.at) t.filing, t.status, t.at, t."sourceOrderId", t."cardId", t.path, t.error, coalesce(t.detail, '{}')
    FROM jsonb_to_recordset($1::jsonb) AS t(filing text, status text, at timestamptz, "sourceOrderId" text, "cardId" text, path text,
                                             error text, detail jsonb)
   WHERE NOT EXISTS (SELECT 1 FROM opcli.outcomes o WHERE o.filing = t.filing AND o.status = t.status AND o.at = t.at)`;

const NOTES = `INSERT INTO opcli.notes (kind, filing, origin, store_id, key, message, os_user, at, detail)
  SELECT DISTINCT ON (t.kind, t.filing, t.key, t.at, t.message) t.kind, t.filing, t.origin, t."storeId", t.key, t.message, t."osUser", t.at,
         coalesce(t.detail, '{}')
    FROM jsonb_to_recordset($1::jsonb) AS t(kind text, filing text, origin text, "storeId" text, key text, message text, "osUser" text,
                                             at timestamptz, detail jsonb)
   WHERE NOT EXISTS (SELECT 1 FROM opcli.notes n WHERE n.kind = t.kind AND n.filing IS NOT DISTINCT FROM t.filing
                       AND n.key IS NOT DISTINCT FROM t.key AND n.at = t.at AND n.message = t.message)`;

const ADD = { runs: RUNS, intents: INTENTS, outcomes: OUTCOMES, notes: NOTES };

/** Adds rows to one table in one statement, skipping those it holds already: how many it added (a run's own rows too). */
export async function addRows<T extends keyof typeof ADD>(client: ClientBase, table: T, rows: Required<ImportChunk>[T] | undefined): Promise<number> {
  return rows?.length ? ((await client.query(ADD[table], [JSON.stringify(rows)])).rowCount ?? 0) : 0;
}

/** How many lines of a file are in the record already (0: none). */
export async function importedLines(client: ClientBase, fileId: string): Promise<number> {
  const result = await client.query<{ lines: number }>('SELECT coalesce(max(lines), 0)::int AS lines FROM opcli.imports WHERE file_id = $1', [fileId]);
  return result.rows[0]?.lines ?? 0;
}

/** Imports one file in one transaction (none when all `file.lines` are in already); `dryRun` rolls it back. */
export async function importRecord(
  client: ClientBase,
  file: ImportedFile,
  chunks: (alreadyIn: number) => AsyncIterable<ImportChunk>,
  options: { dryRun?: boolean } = {},
): Promise<ImportCounts> {
  const work = async (): Promise<ImportCounts> => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK]);
    const alreadyIn = await importedLines(client, file.fileId);
    const counts: ImportCounts = { alreadyIn, runs: 0, intents: 0, outcomes: 0, notes: 0 };
    // All in already: nothing is written.
    if (alreadyIn >= file.lines) return counts;
    for await (const chunk of chunks(alreadyIn)) {
      for (const table of ['runs', 'intents', 'outcomes', 'notes'] as const) counts[table] += await addRows(client, table, chunk[table]);
    }
    await client.query('INSERT INTO opcli.imports (file_id, path, lines, at) VALUES ($1, $2, $3, now())', [file.fileId, file.path, file.lines]);
    return counts;
  };
  return inTransaction(client, work, 'BEGIN', options.dryRun ? 'ROLLBACK' : 'COMMIT');
}
