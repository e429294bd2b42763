/**
 * The record of claims in the team's record in PostgreSQL: the file record's questions (src/claims/record.ts),
 * each an indexed query, answered by the one rule of src/record/outcome.ts. An intent is committed before its
 * request leaves, as attempt `seen + 1` of its key under the unique key; a batch's group is one transaction
 * (the file's one fdatasync), and an intent it did not insert was taken by another member: held, never sent.
 * Transactions are chained (a run's row before its intents, an intent before its outcome). A database that
 * fails fails safe: what did not commit is not sent, every later question fails with the same one line.
 * CHOICE (docs/spec-choices.md#record-places): the file records of before are still read, never written.
 */
import { hostName, osUser } from '../config/user-name.js';
import { emailIdentity } from '../core/identity.js';
import { HEX64 } from '../claims/record-format.js';
import { claimMayExist } from '../record/outcome.js';
import type { ClaimRecord, Taken } from '../claims/record.js';
import {
  type BatchRow,
  type IntentLine,
  type NewIntent,
  type OutcomeLine,
  type ReadLine,
  type RecordHit,
  type RecordStore,
  strongest,
} from '../claims/record-format.js';
import { batchRowOf, orderTerm, standingOfKey } from '../claims/record-index.js';
import type { ConnectionContext } from './connection.js';
import { NOTHING_WRITTEN, openRecordDatabase, type RecordDatabase } from './database.js';
import { addRows, type RunRow } from './import.js';
import { ATTEMPTS, type AttemptRecordRow, type IntentRow, inTransaction, type OutcomeRow, PAGE, present } from './queries.js';
import type { ClientBase } from 'pg';

/** What a rerun does after the database failed mid-run, in the words of the one line. */
export const RERUN_AFTER_FAILURE =
  'rows whose intent was not committed were not sent; rerunning the same command once the database is back is safe (rows sent already are held or skipped, never filed twice)';

/** What a rerun does when the outcomes of claims sent could not be written. */
const OUTCOMES_UNWRITTEN =
  "the outcome of claims already sent was not written: a rerun reports them uncertain (`opcli claims history` shows them) and never sends them again on its own; this run's report says what the service answered";

/** How many keys' read attempts are remembered until their intent is written (a batch reads at most its window ahead). */
const SEEN_LIMIT = 50_000;

/** A row of the record's questions: an intent with its outcomes, in order. */
type AttemptRow = Pick<
  AttemptRecordRow,
  'id' | 'key' | 'attempt' | 'filing' | 'at' | 'run' | 'source' | 'line' | 'osUser' | 'host' | 'profile' | 'similarity' | 'item' | 'forced' | 'author'
> & {
  detail: { email?: string; journal?: string; journalId?: string; row?: string; tag?: number; like?: string; claim?: unknown };
  outcomes: { status: OutcomeLine['status']; at: string; sourceOrderId: string | null; error: string | null }[];
};

/** The intents of a batch ($3: its name) whose row key (--key's, else the content key) is `row`: the expressions of intents_by_batch_row. */
const BATCH_ROW = (i: string, row: string) =>
  `${i}.origin = $1 AND ${i}.store_id = $2 AND ${i}.kind = 'claim' AND ${i}.detail ? 'journal' AND ${i}.detail->>'journal' = $3 AND coalesce(${i}.detail->>'row', ${i}.key) = ${row}`;

/** The questions of the record of claims, each served by an index (test/record-pg/claims.test.ts checks the plans). */
export const CLAIM_QUESTIONS = {
  /** Every attempt of one key (intents_one_attempt) with the key's set-aside notes (notes_by_key); a row of nulls for notes alone. */
  byKey: `WITH n AS (SELECT json_agg(json_build_object('filing', n.filing, 'at', n.at, 'user', coalesce(n.os_user, n.author), 'detail', n.detail) ORDER BY n.id)
      AS set_aside FROM opcli.notes n WHERE n.kind = 'set-aside' AND n.origin = $1 AND n.store_id = $2 AND n.key = $3)
    SELECT a.*, n.set_aside FROM n LEFT JOIN LATERAL (${ATTEMPTS} WHERE i.origin = $1 AND i.store_id = $2 AND i.kind = 'claim' AND i.key = $3) a ON true
     ORDER BY a.attempt`,
  /** Every attempt of the key of the last claim with a similarity fingerprint, in one round trip: intents_by_similarity, then intents_one_attempt. */
  lastOfSimilarity: `${ATTEMPTS} WHERE i.origin = $1 AND i.store_id = $2 AND i.kind = 'claim' AND i.key = (SELECT s.key FROM opcli.intents s
    WHERE s.origin = $1 AND s.store_id = $2 AND s.similarity = $3 AND s.kind = 'claim' ORDER BY s.id DESC LIMIT 1) ORDER BY i.attempt`,
  /** The highest attempt of some keys: intents_one_attempt. */
  maxAttempts: `SELECT key, max(attempt) AS attempt FROM opcli.intents WHERE origin = $1 AND store_id = $2 AND kind = 'claim' AND key = ANY($3) GROUP BY key`,
  /** What the earlier runs of a batch ($3: its name) did with a row ($4: its row key), here or on another computer: intents_by_batch_row. */
  batchRow: `${ATTEMPTS} WHERE ${BATCH_ROW('i', '$4')} ORDER BY i.id`,
  /** The rows of a batch that look like a row ($4: the fingerprint), the last tried first: intents_by_batch_like (each row then asked as batchRow). */
  batchLike: `SELECT coalesce(detail->>'row', key) AS row FROM opcli.intents
    WHERE origin = $1 AND store_id = $2 AND kind = 'claim' AND detail ? 'like' AND detail->>'journal' = $3 AND detail->>'like' = $4
    GROUP BY 1 ORDER BY max(id) DESC`,
  /** The keys one customer's claims were filed under: intents_by_customer. */
  keysOfCustomer: `SELECT DISTINCT key FROM opcli.intents WHERE origin = $1 AND store_id = $2 AND customer_email = $3 AND kind = 'claim'`,
  /** The keys of the claims filed as one order: outcomes_by_order. */
  keysOfOrder: `SELECT DISTINCT i.key FROM opcli.outcomes o JOIN opcli.intents i ON i.filing = o.filing
    WHERE o.detail ? 'order' AND o.detail->>'order' = $3 AND i.origin = $1 AND i.store_id = $2 AND i.kind = 'claim'`,
} as const;

/**
 * Every attempt of the store's claims (of `keys` only), claim by claim (a key's attempts up to the one
 * filed), in the order of their first attempt, as `claims history` lists a file.
 */
function claimsInOrder(keys: boolean): string {
  return `WITH a AS (
    SELECT i.id, i.key, i.attempt, EXISTS (SELECT 1 FROM opcli.outcomes o WHERE o.filing = i.filing AND o.status = 'filed') AS filed
      FROM opcli.intents i WHERE i.origin = $1 AND i.store_id = $2 AND i.kind = 'claim'${keys ? ' AND i.key = ANY($3)' : ''}
  ), c AS (
    SELECT a.id, a.key, a.attempt,
           coalesce(sum(CASE WHEN a.filed THEN 1 ELSE 0 END) OVER (PARTITION BY a.key ORDER BY a.attempt ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS claim
      FROM a
  ), d AS (SELECT c.id, c.attempt, c.key, c.claim, min(c.id) OVER (PARTITION BY c.key, c.claim) AS first FROM c)
  ${ATTEMPTS} JOIN d ON d.id = i.id ORDER BY d.first, d.attempt`;
}

export interface RunDetails {
  profile: string;
  source: string;
  journal?: string;
}

/** The store a record's rows are keyed by. */
export interface Scope {
  origin: string;
  storeId: string;
}

/** A store as the database keys it: its origin and store ('-' for none, so the unique key holds; as the gift card ledger's rows name it). */
export function scopeOf(store: RecordStore): Scope {
  return { origin: store.origin ?? '-', storeId: store.storeId ?? '-' };
}

/** An intent to write: a run's (its claim as JSON text, claimJson) or a file record's read line (its claim parsed, claim). */
type ClaimIntent = NewIntent & { at: string; user: string; host: string; journalId?: string; claim?: unknown };

/** The one layout of a claim's intent as a row, for a run's intents and those `record import` copies alike. */
export function claimIntentRow(l: ClaimIntent, scope: Scope, run?: RunDetails & { journalId?: string }): Omit<IntentRow, 'attempt'> {
  return {
    kind: 'claim',
    ...scope,
    key: l.key,
    filing: l.issuance,
    at: l.at,
    run: l.run,
    source: l.source ?? run?.source,
    line: l.line,
    osUser: l.user,
    host: l.host,
    profile: l.profile ?? run?.profile,
    similarity: l.sim,
    customerEmail: l.email === undefined ? undefined : emailIdentity(l.email),
    item: l.item,
    forced: !!l.forced,
    // What a batch's resume asks of the database (batchRow), as the file's intent holds it.
    detail: present({
      email: l.email,
      journal: l.journal ?? run?.journal,
      journalId: l.journalId ?? run?.journalId,
      row: l.row,
      tag: l.tag,
      like: l.like,
      claim: l.claim,
    }),
  };
}

/** The one layout of a claim's outcome as a row (its order as `claims history --order` compares it). */
export function claimOutcomeRow(o: Pick<OutcomeLine, 'issuance' | 'status' | 'at' | 'sourceOrderId' | 'error'>): OutcomeRow {
  const detail = o.sourceOrderId ? { order: orderTerm(o.sourceOrderId) } : {};
  return { filing: o.issuance, status: o.status, at: o.at, sourceOrderId: o.sourceOrderId, error: o.error, detail };
}

/** The one layout of a batch run as a row of opcli.runs. */
export function claimRunRow(run: string, at: string, details: RunDetails & { user: string; host: string; journalId?: string }, scope: Scope): RunRow {
  const { source, journal, journalId, profile, user, host } = details;
  return { run, ...scope, source, journal, journalId, osUser: user, host, profile, at };
}

/** A set-aside note of a key, as byKey gives it. */
interface SetAsideRow {
  filing: string | null;
  at: string;
  user: string;
  detail: { line?: number; reason?: string; issuance?: string };
}

/** Where a key stands, from its attempt rows (and set-aside notes), by the one rule (src/record/outcome.ts through standingOfKey). */
function standingOf(rows: AttemptRow[], setAside: SetAsideRow[] = [], key = ''): RecordHit | undefined {
  return standingOfKey(withSetAside(rows.flatMap(linesOf), setAside, key), undefined, (i) => i);
}

/** A key's lines with its set-aside notes as the file record's set-aside lines, in time order: what they name may have been sent. */
function withSetAside(lines: ReadLine[], notes: SetAsideRow[], key: string): ReadLine[] {
  if (notes.length === 0) return lines;
  const merged = [...lines];
  for (const [n, note] of notes.entries()) {
    const at = new Date(note.at).toISOString();
    const line: ReadLine = {
      v: 1,
      issuance: note.filing ?? note.detail.issuance ?? `set-aside-${n}`,
      key,
      type: 'set-aside',
      at,
      user: note.user,
      line: note.detail.line ?? 1,
      reason: note.detail.reason ?? 'set aside',
    };
    const after = merged.findIndex((l) => 'at' in l && l.at > at);
    merged.splice(after === -1 ? merged.length : after, 0, line);
  }
  return merged;
}

/** An attempt row as the file record's lines: its intent, then its outcomes. */
function linesOf(r: AttemptRow): ReadLine[] {
  const { detail: d, filing: issuance, key } = r;
  const intent = present({
    v: 1,
    issuance,
    key,
    type: 'intent',
    at: new Date(r.at).toISOString(),
    run: r.run,
    user: r.osUser ?? r.author,
    host: r.host ?? '?',
    profile: r.profile ?? '?',
    source: r.source ?? '?',
    line: r.line,
    journal: d.journal,
    journalId: d.journalId,
    sim: r.similarity,
    email: d.email,
    item: r.item,
    forced: r.forced || undefined,
    row: d.row,
    tag: d.tag,
    like: d.like,
    claim: d.claim,
  }) as IntentLine;
  const outcomes = r.outcomes.map(
    (o) =>
      present({
        v: 1,
        issuance,
        key,
        type: 'outcome',
        at: new Date(o.at).toISOString(),
        status: o.status,
        sourceOrderId: o.sourceOrderId,
        error: o.error,
      }) as OutcomeLine,
  );
  return [intent, ...outcomes];
}

export class DatabaseClaimRecord {
  readonly path: string;
  private readonly scope: Scope;
  /** The highest attempt of each key this process read, until it writes the next one (bounded: SEEN_LIMIT). */
  private readonly seen = new Map<string, number>();
  private readonly runs = new Map<string, RunDetails>();
  /** A run's row, written by the next transaction (before its intents). */
  private pendingRuns: { run: string; at: string; details: RunDetails }[] = [];
  private pendingOutcomes: Pick<OutcomeLine, 'issuance' | 'status' | 'at' | 'sourceOrderId' | 'error'>[] = [];
  /** The transactions, one after the other. */
  private chain: Promise<unknown> = Promise.resolve();
  /** The first failure of the database: every later write and question fails with it. */
  private failure: unknown;
  private readonly user = osUser();
  private readonly host = hostName();

  private constructor(
    private readonly database: RecordDatabase,
    store: RecordStore,
    private readonly earlier: ClaimRecord | undefined,
  ) {
    this.scope = scopeOf(store);
    this.path = `record database ${database.target.label}`;
  }

  /** Opens the record (the pool, the schema checked). */
  static async open(
    record: NonNullable<Parameters<typeof openRecordDatabase>[0]>,
    ctx: ConnectionContext,
    store: RecordStore,
    earlier: ClaimRecord | undefined,
  ): Promise<DatabaseClaimRecord> {
    try {
      // Three connections: a group's transaction, and the planner's two questions of a row asked at once (plan.ts).
      const database = await openRecordDatabase(record, ctx, { max: 3 });
      return new DatabaseClaimRecord(database, store, earlier);
    } catch (error) {
      earlier?.close();
      throw error;
    }
  }

  /** Starts a batch run: its row is committed with (before) its first intents. */
  startRun(run: string, details: RunDetails, now = Date.now()): void {
    this.runs.set(run, details);
    this.pendingRuns.push({ run, at: new Date(now).toISOString(), details });
  }

  /** Runs one question; a failure becomes (and stays) the one line. */
  private async ask<T>(fn: (client: ClientBase) => Promise<T>, rerun = RERUN_AFTER_FAILURE): Promise<T> {
    if (this.failure !== undefined) throw this.failure;
    try {
      return await this.database.withClient(fn, rerun);
    } catch (error) {
      this.failure ??= error;
      throw error;
    }
  }

  private async attemptsOf(key: string): Promise<{ rows: AttemptRow[]; setAside: SetAsideRow[] }> {
    // A prepared statement (named): a batch asks it of every row, parsed and planned once per connection.
    const values = [this.scope.origin, this.scope.storeId, key];
    const rows = await this.ask(
      async (c) => (await c.query<AttemptRow & { set_aside: SetAsideRow[] | null }>({ name: 'opcli-claims-by-key', text: CLAIM_QUESTIONS.byKey, values })).rows,
    );
    return { rows: rows.filter((r) => r.id !== null), setAside: rows[0]?.set_aside ?? [] };
  }

  /** Where a key stands in the database (undefined: never filed), by the one rule. */
  private async hitOf(key: string, remember: boolean): Promise<RecordHit | undefined> {
    const { rows, setAside } = await this.attemptsOf(key);
    if (remember) this.remember(key, Math.max(0, ...rows.map((r) => r.attempt)));
    return standingOf(rows, setAside, key);
  }

  private remember(key: string, attempt: number): void {
    this.seen.delete(key);
    this.seen.set(key, attempt);
    if (this.seen.size > SEEN_LIMIT) this.seen.delete(this.seen.keys().next().value as string);
  }

  /** What the record holds for a content key: the strongest of the database's and the earlier files' answers. */
  async lookup(key: string): Promise<RecordHit | undefined> {
    return strongest([await this.hitOf(key, true), this.earlier?.lookup(key)]);
  }

  /** The last claim that may exist with this similarity fingerprint and another key (the database first, then the earlier files). */
  async similar(sim: string | undefined, key: string): Promise<RecordHit | undefined> {
    if (!sim || !HEX64.test(sim)) return undefined;
    const values = [this.scope.origin, this.scope.storeId, sim];
    const rows = await this.ask(
      async (c) => (await c.query<AttemptRow>({ name: 'opcli-claims-similar', text: CLAIM_QUESTIONS.lastOfSimilarity, values })).rows,
    );
    if (rows.length && rows[0]?.key !== key) {
      const hit = standingOf(rows);
      if (hit?.intent && claimMayExist(hit.state)) return hit;
    }
    return this.earlier?.similar(sim, key);
  }

  /** One claim's intent, committed before it returns: only then may its request leave. A filing in `Taken` must not be sent. */
  intents(lines: NewIntent[], now = Date.now()): Promise<Taken> {
    return this.intentsDurable(lines, now);
  }

  /** A group of intents (with the outcomes and run rows queued before) in one transaction: the rows not in `Taken` may be sent. */
  intentsDurable(lines: NewIntent[], now = Date.now()): Promise<Taken> {
    const at = new Date(now).toISOString();
    return this.transaction((client) => this.insertIntents(client, lines, at));
  }

  /** Queues an outcome (written with the next group, or by close). */
  outcome(o: Omit<OutcomeLine, 'v' | 'type' | 'at'>, now = Date.now()): void {
    this.pendingOutcomes.push({ issuance: o.issuance, status: o.status, at: new Date(now).toISOString(), sourceOrderId: o.sourceOrderId, error: o.error });
  }

  /** Runs `fn` in a transaction after the ones before it, with the queued run rows and outcomes first. */
  private transaction<T>(fn: (client: ClientBase) => Promise<T>, rerun = RERUN_AFTER_FAILURE): Promise<T> {
    const runs = this.pendingRuns;
    const outcomes = this.pendingOutcomes;
    this.pendingRuns = [];
    this.pendingOutcomes = [];
    const work = async (client: ClientBase): Promise<T> => {
      await addRows(
        client,
        'runs',
        runs.map(({ run, at, details }) => claimRunRow(run, at, { ...details, user: this.user, host: this.host }, this.scope)),
      );
      await addRows(client, 'outcomes', outcomes.map(claimOutcomeRow));
      return fn(client);
    };
    const next = this.chain.then(() => this.ask((client) => inTransaction(client, () => work(client)), rerun));
    this.chain = next.catch(() => {});
    return next;
  }

  /** The group's intents as attempt `seen + 1` of their keys; those the unique key refused are read again and returned. */
  private async insertIntents(client: ClientBase, lines: NewIntent[], at: string): Promise<Taken> {
    if (lines.length === 0) return new Map();
    const { origin, storeId } = this.scope;
    const unseen = [...new Set(lines.filter((l) => !this.seen.has(l.key)).map((l) => l.key))];
    // A key this run did not read (--allow-duplicates, --force, or read too long ago): its attempt follows the highest there is now.
    if (unseen.length) {
      const max = await client.query<{ key: string; attempt: number }>(CLAIM_QUESTIONS.maxAttempts, [origin, storeId, unseen]);
      const found = new Map(max.rows.map((r) => [r.key, r.attempt]));
      for (const key of unseen) this.remember(key, found.get(key) ?? 0);
    }
    const next = new Map<string, number>();
    const rows = lines.map((l) => {
      const attempt = (next.get(l.key) ?? this.seen.get(l.key) ?? 0) + 1;
      next.set(l.key, attempt);
      const r = claimIntentRow({ ...l, at, user: this.user, host: this.host }, this.scope, l.run === undefined ? undefined : this.runs.get(l.run));
      const detail = withClaim(JSON.stringify(r.detail), l.claimJson);
      return [r.key, attempt, r.filing, r.run, r.source, r.line, r.profile, r.similarity, r.customerEmail, r.item, !!r.forced, detail].map((v) => v ?? null);
    });
    // One array a column, in INSERT's order.
    const cols = (rows[0] ?? []).map((_, c) => rows.map((row) => row[c]));
    const inserted = await client.query<{ filing: string }>(
      `INSERT INTO opcli.intents (kind, origin, store_id, at, os_user, host, key, attempt, filing, run, source, line, profile, similarity, customer_email, item, forced, detail)
       SELECT 'claim', $1::text, $2::text, $3::timestamptz, $4::text, $5::text, * FROM unnest($6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[], $13::text[],
              $14::text[], $15::text[], $16::boolean[], $17::jsonb[])
       ON CONFLICT DO NOTHING RETURNING filing`,
      [origin, storeId, at, this.user, this.host, ...cols],
    );
    for (const [key, attempt] of next) this.seen.set(key, attempt);
    if (inserted.rows.length === lines.length) return new Map();
    const done = new Set(inserted.rows.map((r) => r.filing));
    const taken: Taken = new Map();
    for (const l of lines) {
      if (done.has(l.issuance)) continue;
      this.seen.delete(l.key);
      taken.set(l.issuance, 'another member filed the same claim at the same time; not sent');
    }
    return taken;
  }

  /** The database takes no lock (concurrency is the unique constraint's): never lost. */
  lost(): boolean {
    return false;
  }

  /** `close`: a batch's end. */
  closeDurable(): Promise<void> {
    return this.close();
  }

  /** Writes the queued outcomes and run rows (unless the database failed: the first failure is the one reported) and closes. */
  async close(): Promise<void> {
    try {
      if (this.failure === undefined && (this.pendingOutcomes.length || this.pendingRuns.length)) {
        await this.transaction(async () => undefined, OUTCOMES_UNWRITTEN);
      } else await this.chain;
    } finally {
      this.earlier?.close();
      await this.database.close();
    }
  }

  /** A batch's resume: what its earlier runs did with a row, by row key or "looks like" fingerprint; the database first, then the files. */
  async batchRow(batch: string, by: { key: string } | { like: string }): Promise<BatchRow | undefined> {
    const found = 'key' in by ? await this.rowOfBatch(batch, by.key) : await this.lastLike(batch, by.like);
    return found ?? this.earlier?.batchRow(batch, by);
  }

  /** Where a row of a batch stands, by its row key. */
  private async rowOfBatch(batch: string, row: string): Promise<BatchRow | undefined> {
    const values = [this.scope.origin, this.scope.storeId, batch, row];
    const rows = await this.ask(async (c) => (await c.query<AttemptRow>({ name: 'opcli-claims-batch-row', text: CLAIM_QUESTIONS.batchRow, values })).rows);
    return batchRowOf(standingOf(rows));
  }

  /** The last row of a batch with the fingerprint `like` whose claim may exist, as record-index.ts batchRow answers. */
  private async lastLike(batch: string, like: string): Promise<BatchRow | undefined> {
    const values = [this.scope.origin, this.scope.storeId, batch, like];
    const rows = await this.ask(
      async (c) => (await c.query<{ row: string }>({ name: 'opcli-claims-batch-like', text: CLAIM_QUESTIONS.batchLike, values })).rows,
    );
    for (const { row } of rows) {
      const found = await this.rowOfBatch(batch, row);
      if (found && claimMayExist(found.status)) return found;
    }
    return undefined;
  }

  /** The store's claims (one customer's or order's only, when asked) handed to `take` one at a time, through a cursor in a read-only snapshot. */
  async eachClaim(filter: { email?: string; order?: string }, take: (attempts: ReadLine[][]) => void): Promise<void> {
    const { origin, storeId } = this.scope;
    await this.ask(async (client) => {
      let keys: string[] | undefined;
      if (filter.email !== undefined || filter.order !== undefined) {
        const question = filter.email !== undefined ? CLAIM_QUESTIONS.keysOfCustomer : CLAIM_QUESTIONS.keysOfOrder;
        const term = filter.email !== undefined ? emailIdentity(filter.email) : orderTerm(filter.order as string);
        keys = (await client.query<{ key: string }>(question, [origin, storeId, term])).rows.map((r) => r.key);
        if (keys.length === 0) return;
      }
      const read = async (): Promise<void> => {
        await client.query(`DECLARE claims NO SCROLL CURSOR FOR ${claimsInOrder(!!keys)}`, keys ? [origin, storeId, keys] : [origin, storeId]);
        let claim: ReadLine[][] = [];
        let claimKey: string | undefined;
        let filed = false;
        for (;;) {
          const page = await client.query<AttemptRow>(`FETCH ${PAGE} FROM claims`);
          for (const r of page.rows) {
            // A new claim: another key, or the attempt after the one that was filed.
            if (claim.length && (r.key !== claimKey || filed)) {
              take(claim);
              claim = [];
            }
            claimKey = r.key;
            filed = r.outcomes.some((o) => o.status === 'filed');
            claim.push(linesOf(r));
          }
          if (page.rows.length < PAGE) break;
        }
        if (claim.length) take(claim);
      };
      await inTransaction(client, read, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    }, NOTHING_WRITTEN);
  }
}

/** An intent's detail (JSON text) with the row's claim (already JSON text, its robust form) spliced in last. */
function withClaim(detail: string, claimJson: string | undefined): string {
  if (!claimJson) return detail;
  return `${detail.slice(0, -1)}${detail.length > 2 ? ',' : ''}"claim":${claimJson}}`;
}
