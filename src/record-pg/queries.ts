/**
 * The record's questions as parameterized statements (each served by an index of migrations/), and an
 * attempt's intent (outcomes and notes are added as import.ts adds them). What a key's rows mean stays src/record/outcome.ts's rule.
 *
 * CHOICE (docs/spec-choices.md#record-attempts): exactly once across computers is optimistic concurrency
 * on the unique key: read a key's attempts, decide, insert attempt `seen + 1`; another member's insert in
 * between makes it `taken`, and the caller decides again, never sending on it. An insert that fails any
 * other way may have committed: the request does not leave, and a later run holds it as uncertain.
 */
import type { ClientBase } from 'pg';

/** What a claim or credit attempt records (opcli.intents). */
export interface IntentRow {
  kind: 'claim' | 'credit';
  /** The service API's origin, and its store ('-' for none: claims/scopeOf, giftcard/ledger-db scopeOf). */
  origin: string;
  storeId: string;
  key: string;
  attempt: number;
  /** The attempt's id, shared with its outcomes (the file record's `issuance`). */
  filing: string;
  at: string;
  run?: string;
  source?: string;
  line?: number;
  osUser?: string;
  host?: string;
  profile?: string;
  similarity?: string;
  customerEmail?: string;
  customerId?: string;
  item?: string;
  amountCents?: number;
  currency?: string;
  forced?: boolean;
  /** What else the kind records (a credit's order number, name, shop, first path…). */
  detail?: Record<string, unknown>;
}

export interface OutcomeRow {
  filing: string;
  status: 'filed' | 'rejected' | 'uncertain' | 'not_sent' | 'issued' | 'failed';
  at: string;
  sourceOrderId?: string;
  cardId?: string;
  path?: string;
  error?: string;
  detail?: Record<string, unknown>;
}

/** An attempt as read back, with its author and outcomes. */
export interface Attempt extends IntentRow {
  /** The row's place in the record: later rows have larger ids (a reader pages on it). */
  id: number;
  author: string;
  recordedAt: string;
  outcomes: (OutcomeRow & { author: string; recordedAt: string })[];
}

/** An intent row given as one JSON parameter, as `record import` adds them. */
const INSERT_INTENT = `INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, run, source, line, os_user, host, profile, similarity,
                           customer_email, customer_id, item, amount_cents, currency, forced, detail)
  SELECT kind, origin, "storeId", key, attempt, filing, at, run, source, line, "osUser", host, profile, similarity, "customerEmail", "customerId",
         item, "amountCents", currency, coalesce(forced, false), coalesce(detail, '{}')
    FROM jsonb_to_record($1::jsonb) AS t(kind text, origin text, "storeId" text, key text, attempt integer, filing text, at timestamptz, run text,
         source text, line integer, "osUser" text, host text, profile text, similarity text, "customerEmail" text, "customerId" text, item text,
         "amountCents" bigint, currency text, forced boolean, detail jsonb)`;

const UNIQUE_VIOLATION = '23505';

/** How many attempts history (of claims and of credits) reads a page. */
export const PAGE = 1000;

/** Inserts attempt `row.attempt` of its key; `taken` when that attempt (or its filing id) exists already. */
export async function insertIntent(client: ClientBase, row: IntentRow): Promise<'inserted' | 'taken'> {
  try {
    await client.query(INSERT_INTENT, [JSON.stringify(row)]);
    return 'inserted';
  } catch (error) {
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return 'taken';
    throw error;
  }
}

/** Runs `fn` in one transaction on `client`, ended by `end` when it returns and rolled back when it throws. */
export async function inTransaction<T>(client: ClientBase, fn: () => Promise<T>, begin = 'BEGIN', end: 'COMMIT' | 'ROLLBACK' = 'COMMIT'): Promise<T> {
  await client.query(begin);
  try {
    const result = await fn();
    await client.query(end);
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** Every attempt with its outcomes, for a WHERE clause on `i` (opcli.intents), columns named as Attempt names them. */
export const ATTEMPTS = `SELECT i.id, i.kind, i.origin, i.store_id AS "storeId", i.key, i.attempt, i.filing, i.at, i.run, i.source, i.line,
       i.os_user AS "osUser", i.host, i.profile, i.similarity, i.customer_email AS "customerEmail", i.customer_id AS "customerId", i.item,
       i.amount_cents AS "amountCents", i.currency, i.forced, i.detail, i.author, i.recorded_at AS "recordedAt",
       coalesce((SELECT json_agg(json_build_object('filing', o.filing, 'status', o.status, 'at', o.at, 'sourceOrderId', o.source_order_id,
                 'cardId', o.card_id, 'path', o.path, 'error', o.error, 'detail', o.detail, 'author', o.author, 'recordedAt', o.recorded_at) ORDER BY o.id)
                 FROM opcli.outcomes o WHERE o.filing = i.filing), '[]') AS outcomes
  FROM opcli.intents i`;

/** The statements of the record's questions, each with the index that serves it (test/record-pg/queries.test.ts checks the plans). */
export const QUESTIONS = {
  /** Every attempt of one key: intents_one_attempt. */
  byKey: `${ATTEMPTS} WHERE i.origin = $1 AND i.store_id = $2 AND i.kind = $3 AND i.key = $4 ORDER BY i.attempt`,
  /** Credits of the same amount to the same customer since a time, under other keys (the 30-day hold): intents_credit_hold. */
  creditHold: `${ATTEMPTS} WHERE i.kind = 'credit' AND i.origin = $1 AND i.store_id = $2 AND i.customer_email = $3 AND i.amount_cents = $4
    AND i.currency = $5 AND i.at >= $6 AND i.key <> $7 ORDER BY i.at`,
  /** Every attempt of several keys (a page of history's claims), by (origin, store, key) arrays and the kind: intents_one_attempt. */
  keysOf: `${ATTEMPTS} JOIN unnest($1::text[], $2::text[], $4::text[]) AS k(origin, store_id, key)
    ON i.origin = k.origin AND i.store_id = k.store_id AND i.kind = $3 AND i.key = k.key ORDER BY i.id`,
  /** Every attempt of one kind after a row, a page at a time (history): the primary key. */
  kindAfter: `${ATTEMPTS} WHERE i.kind = $1 AND i.id > $2 ORDER BY i.id LIMIT $3`,
} as const;

/** An attempt as ATTEMPTS selects it: bigints as text, times as Date (an outcome's, inside JSON, as text), absent values null. */
export type AttemptRecordRow = {
  [K in keyof Omit<Attempt, 'id' | 'at' | 'recordedAt' | 'amountCents' | 'outcomes'>]-?: undefined extends Attempt[K]
    ? Exclude<Attempt[K], undefined> | null
    : Attempt[K];
} & {
  id: string;
  at: Date;
  recordedAt: Date;
  amountCents: string | null;
  outcomes: (Omit<Attempt['outcomes'][number], 'at' | 'recordedAt'> & { at: string; recordedAt: string })[];
};

/** The object without its absent (undefined or null) members (a row read back, a row's detail). */
export function present<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;
}

/** A row as the record's readers take it: times as ISO 8601, absent values left out, amounts as numbers. */
function attemptOf(r: AttemptRecordRow): Attempt {
  return present({
    ...r,
    id: Number(r.id),
    at: r.at.toISOString(),
    amountCents: r.amountCents === null ? undefined : Number(r.amountCents),
    recordedAt: r.recordedAt.toISOString(),
    outcomes: r.outcomes.map((o) => present({ ...o, at: new Date(o.at).toISOString(), recordedAt: new Date(o.recordedAt).toISOString() })),
  }) as unknown as Attempt;
}

export async function ask(client: ClientBase, question: keyof typeof QUESTIONS, params: unknown[]): Promise<Attempt[]> {
  const result = await client.query<AttemptRecordRow>(QUESTIONS[question], params);
  return result.rows.map(attemptOf);
}
