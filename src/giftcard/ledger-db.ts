/**
 * The gift card ledger in the team's record in PostgreSQL, for a profile with a record-url: the file
 * ledger's rules (ledger.ts), other storage. An attempt is an intent row (kind `credit`) committed
 * before any request that can move money, as attempt `seen + 1` of its key under the unique key
 * (src/record-pg/queries.ts): when another member took it first, the decision is made again on a fresh
 * reading (`withLock`), which holds this credit. An outcome is a row of its attempt, a warning a note;
 * an outcome that cannot be written leaves the attempt without one, which every later run holds as uncertain.
 * CHOICE (docs/spec-choices.md#ledger-key): an intent is scoped by its key's provider shop (`origin`) and service store.
 */
import { existsSync } from 'node:fs';
import type { ClientBase } from 'pg';
import { ExitCode, OpcliError } from '../core/errors.js';
import { emailIdentity } from '../core/identity.js';
import type { ResolvedProfile } from '../config/profile.js';
import { earlierPlaces } from '../config/record-dir.js';
import { NOTHING_WRITTEN, openRecordDatabase, type RecordDatabase } from '../record-pg/database.js';
import type { ConnectionContext } from '../record-pg/connection.js';
import { addRows, type NoteRow } from '../record-pg/import.js';
import { type Attempt, ask, type IntentRow, insertIntent, type OutcomeRow, PAGE } from '../record-pg/queries.js';
import {
  type AttemptRecord,
  type CreditLedger,
  groupIssuances,
  type Held,
  type Issuance,
  Ledger,
  LedgerRecord,
  ledgerFor,
  type OutcomeRecord,
  type WarningRecord,
} from './ledger.js';

/** What a failure before the attempt was committed says. */
const NOTHING_SENT = 'nothing was sent; rerunning is safe';

/** How often one run decides again after other members took the attempt it was about to write. */
const MAX_RETAKES = 20;

/** Another member committed the attempt this run was about to write: read again and decide again. */
class AttemptTaken extends Error {}

/** The ledger a profile uses: the team's record in PostgreSQL when it has a record-url, else the file ledger (ledgerFor). */
export async function openLedger(
  configDir: string,
  profile: ResolvedProfile | undefined,
  ctx: Omit<ConnectionContext, 'passwordSource'>,
): Promise<CreditLedger> {
  if (!profile?.record) return ledgerFor(configDir, profile);
  // CHOICE (docs/spec-choices.md#record-places): the ledger files of this config folder and of every
  // place the record lived before are still read, never written, so that moving to the database
  // forgets no credit paid before it (whether or not `record import` copied them in).
  const before = [{ dir: configDir, configDir, earlier: true }, ...earlierPlaces({ dir: configDir, configDir })].map((place) => new Ledger(place));
  const database = await openRecordDatabase(profile.record, { ...ctx, passwordSource: profile.record.passwordSource }, { max: 2 });
  return new DatabaseLedger(database, before);
}

/** The shop and store of a credit key (`shop:…|store:…|claim:…`): the intent's origin and store_id. */
export function scopeOf(key: string): { origin: string; storeId: string } {
  const m = /^shop:([^|]*)\|store:([^|]*)\|/.exec(key);
  return { origin: m?.[1] ?? '-', storeId: m?.[2] ?? '-' };
}

/** What an attempt row keeps beside its columns: the ledger attempt's own fields. */
type AttemptDetail = Pick<AttemptRecord, 'claimId' | 'orderNumber' | 'bonus' | 'amount' | 'email' | 'name' | 'shopUrl' | 'firstPath' | 'user'>;

class DatabaseLedger implements CreditLedger {
  readonly path: string;
  /** The highest attempt of each key this run has read: the next one it writes is one more. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly database: RecordDatabase,
    private readonly earlier: Ledger[],
  ) {
    this.path = `record database ${database.target.label}`;
  }

  /** The attempts of `key` (and with `hold`, the customer's credits of the same amount since `hold.since` under other keys), as ledger records. */
  async heldAgainst(key?: string, email?: string, hold?: { amountCents: number; currency: string; since: number }): Promise<Held> {
    // A ledger file of before that cannot be read stops money here too (DamagedRecordFileError, exit 2).
    const before = this.earlier.map((e) => e.heldAgainst(key, email));
    const earlier = { records: before.flatMap((b) => b.records), uncertain: before.flatMap((b) => b.uncertain) };
    if (key === undefined) return earlier;
    const { origin, storeId } = scopeOf(key);
    const { attempts, setAside } = await this.database.withClient(async (client) => {
      const same = await ask(client, 'byKey', [origin, storeId, 'credit', key]);
      const similar =
        email && hold
          ? await ask(client, 'creditHold', [origin, storeId, emailIdentity(email), hold.amountCents, hold.currency, new Date(hold.since).toISOString(), key])
          : [];
      // A ledger line set aside (torn, or repaired) that `record import` copied: its credit stays uncertain on every computer.
      const aside = await client.query<{ filing: string | null; detail: { line?: number; reason?: string } }>(SET_ASIDE_OF, [origin, storeId, key]);
      return { attempts: [...same, ...similar], setAside: aside.rows };
    }, NOTHING_SENT);
    this.seen.set(key, Math.max(0, ...attempts.filter((a) => a.key === key).map((a) => a.attempt)));
    const uncertain = setAside.map((n) => ({ line: n.detail.line ?? 0, key, issuance: n.filing ?? undefined, reason: n.detail.reason ?? 'was set aside' }));
    return {
      records: [...earlier.records, ...attempts.sort((a, b) => a.id - b.id).flatMap((a) => recordsOf(a, []))],
      uncertain: [...earlier.uncertain, ...uncertain],
    };
  }

  /** Runs `fn` (read, decide, append the attempt) again on a fresh reading while other members take the attempt first. */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await fn();
      } catch (error) {
        if (!(error instanceof AttemptTaken)) throw error;
        if (i >= MAX_RETAKES) {
          throw new OpcliError(
            `Record database ${this.database.target.label}: other members took the attempt this credit was about to write ${MAX_RETAKES + 1} times in a row; nothing was sent.`,
            { hint: 'See `opcli giftcard history` for what they wrote; run the command again once they are done.' },
          );
        }
      }
    }
  }

  async append(record: LedgerRecord): Promise<void> {
    const r = LedgerRecord.parse(record);
    if (r.type === 'attempt') return this.appendAttempt(r);
    const rerun = unwritten(r);
    await this.database.withClient(async (client) => {
      if (r.type === 'outcome') await addRows(client, 'outcomes', [outcomeRow(r)]);
      else if (r.type === 'warning') await addRows(client, 'notes', [warningRow(r)]);
      else {
        throw new OpcliError('internal: a set-aside line belongs to a ledger file, not to the record database', { exitCode: ExitCode.failed });
      }
    }, rerun);
  }

  /** Commits the attempt as the next of its key; AttemptTaken when another member committed that one first. */
  private async appendAttempt(r: AttemptRecord): Promise<void> {
    const attempt = (this.seen.get(r.key) ?? 0) + 1;
    const answer = await this.database.withClient(
      (client) => insertIntent(client, { ...attemptRow(r), attempt }),
      // The statement may have committed before the connection failed: nothing was sent, but a rerun may find the attempt and hold the credit as uncertain.
      'nothing was sent; the attempt may have been recorded, so a rerun may hold this credit until `opcli giftcard history` shows it was not paid (then --force)',
    );
    if (answer === 'taken') throw new AttemptTaken();
    this.seen.set(r.key, attempt);
  }

  async appendLocked(record: LedgerRecord): Promise<void> {
    await this.append(record);
  }

  /** The credit attempts a page at a time (keyset on the primary key), each with what `more` asks of it: memory is a page's. */
  private async *pages<T>(more: (client: ClientBase, attempts: Attempt[]) => Promise<T>): AsyncGenerator<T & { attempts: Attempt[] }> {
    for (let after = 0; ; ) {
      const page = await this.database.withClient(async (client) => {
        const attempts = await ask(client, 'kindAfter', ['credit', after, PAGE]);
        return { ...(await more(client, attempts)), attempts };
      }, NOTHING_WRITTEN);
      yield page;
      if (page.attempts.length < PAGE) return;
      after = page.attempts[page.attempts.length - 1]?.id ?? after;
    }
  }

  /** Every credit in the record, with its outcomes and warnings: the ledger files of before first. */
  async readAll(): Promise<{ records: LedgerRecord[]; damaged: [] }> {
    const records: LedgerRecord[] = this.earlier.flatMap((e) => e.read().records);
    for await (const page of this.pages(async (client, attempts) => ({ warnings: await warningsOf(client, attempts) }))) {
      for (const a of page.attempts) records.push(...recordsOf(a, page.warnings));
    }
    return { records, damaged: [] };
  }

  /** The ledger files of before first, then the credits a page at a time, each page's claims asked once for all their attempts. */
  async eachIssuance(take: (issuance: Issuance, same: Issuance[]) => void, want: (a: AttemptRecord) => boolean = () => true): Promise<{ damaged: [] }> {
    for (const e of this.earlier) await e.eachIssuance(take, want);
    // The files of before, asked by claim only when there are any (a member who never had a file ledger has none).
    const earlier = this.earlier.filter((e) => existsSync(e.path));
    for await (const page of this.pages(claimsOfPage)) {
      const byKey = new Map<string, LedgerRecord[]>();
      for (const a of page.claims) byKey.set(a.key, [...(byKey.get(a.key) ?? []), ...recordsOf(a, page.warnings)]);
      for (const a of page.attempts) {
        const [attempt] = recordsOf(a, []);
        if (attempt?.type !== 'attempt' || !want(attempt)) continue;
        const before = earlier.flatMap((e) => e.heldAgainst(a.key).records);
        const same = groupIssuances([...before, ...(byKey.get(a.key) ?? [])]);
        const own = same.find((i) => i.attempt.issuance === a.filing);
        if (own) take(own, same);
      }
    }
    return { damaged: [] };
  }

  close(): Promise<void> {
    return this.database.close();
  }
}

/** Every attempt of the claims of a page, with their warnings: only keys with other attempts (counted on the index) are read again. */
async function claimsOfPage(client: ClientBase, attempts: Attempt[]): Promise<{ claims: Attempt[]; warnings: WarningRow[] }> {
  const once = new Map<string, number>();
  for (const a of attempts) once.set(a.key, (once.get(a.key) ?? 0) + 1);
  const keys = [...once.keys()].map((key) => ({ key, ...scopeOf(key) }));
  const counted = keys.length
    ? (await client.query<{ key: string; n: number }>(ATTEMPTS_OF_KEYS, [keys.map((k) => k.origin), keys.map((k) => k.storeId), keys.map((k) => k.key)])).rows
    : [];
  const all = new Map(counted.map((c) => [c.key, c.n]));
  const more = keys.filter((k) => (all.get(k.key) ?? 0) > (once.get(k.key) ?? 0));
  const again = new Set(more.map((k) => k.key));
  const claims = [
    ...attempts.filter((a) => !again.has(a.key)),
    ...(more.length ? await ask(client, 'keysOf', [more.map((k) => k.origin), more.map((k) => k.storeId), 'credit', more.map((k) => k.key)]) : []),
  ];
  return { claims, warnings: await warningsOf(client, claims) };
}

async function warningsOf(client: ClientBase, attempts: Attempt[]): Promise<WarningRow[]> {
  return attempts.length ? (await client.query<WarningRow>(NOTES_OF, [attempts.map((a) => a.filing)])).rows : [];
}

/** What was not written and what a rerun does, in words: a credit issued whose outcome is lost says it was issued. */
function unwritten(r: LedgerRecord): string {
  const rerun = 'a rerun holds this credit (its attempt stays without an outcome) and sends nothing; `opcli giftcard history` shows it';
  if (r.type === 'outcome' && r.status === 'issued') {
    return `the credit was issued${r.cardId ? ` (card ${r.cardId})` : ''} but its outcome was not written (issuance ${r.issuance}): ${rerun}; do not issue it again`;
  }
  const what = r.type === 'outcome' ? `the outcome "${r.status}"` : `the ${r.type}`;
  return `${what} of issuance ${r.issuance} was not written: ${rerun}`;
}

/** A ledger attempt as the intent row of its credit (the attempt's number is the writer's to choose). */
export function attemptRow(r: AttemptRecord): Omit<IntentRow, 'attempt'> {
  const detail: AttemptDetail = {
    claimId: r.claimId,
    orderNumber: r.orderNumber,
    bonus: r.bonus,
    amount: r.amount,
    email: r.email,
    name: r.name,
    shopUrl: r.shopUrl,
    firstPath: r.firstPath,
    user: r.user,
  };
  return {
    kind: 'credit',
    ...scopeOf(r.key),
    key: r.key,
    filing: r.issuance,
    at: r.at,
    osUser: r.user,
    host: r.host,
    profile: r.profile,
    customerEmail: emailIdentity(r.email),
    customerId: r.customerId,
    amountCents: r.amountCents,
    currency: r.currency,
    forced: r.forced,
    detail,
  };
}

export function outcomeRow(r: OutcomeRecord): OutcomeRow {
  const { status, path, cardId, error, at } = r;
  const detail = {
    balanceCents: r.balanceCents,
    triggerPosted: r.triggerPosted,
    watch: r.watch,
    possibleDoubleCredit: r.possibleDoubleCredit,
    notes: r.notes,
    user: r.user,
  };
  return { filing: r.issuance, status, at, path, cardId, error, detail };
}

/** A warning (a possible double credit found later) as a note of its attempt. */
export function warningRow(r: WarningRecord): NoteRow & { filing: string; key: string } {
  const detail = { cardId: r.cardId, balanceCents: r.balanceCents };
  return { kind: 'warning', filing: r.issuance, ...scopeOf(r.key), key: r.key, message: r.message, osUser: r.user, at: r.at, detail };
}

/** How many credit attempts each of some keys has (intents_one_attempt). */
const ATTEMPTS_OF_KEYS = `SELECT i.key, count(*)::int AS n FROM opcli.intents i JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(origin, store_id, key)
  ON i.origin = k.origin AND i.store_id = k.store_id AND i.kind = 'credit' AND i.key = k.key GROUP BY i.key`;

/** The set-aside notes of a key (notes_by_key). */
const SET_ASIDE_OF = `SELECT filing, detail FROM opcli.notes WHERE kind = 'set-aside' AND origin = $1 AND store_id = $2 AND key = $3 ORDER BY id`;

const NOTES_OF = `SELECT filing, message, os_user, at, detail, author FROM opcli.notes WHERE kind = 'warning' AND filing = ANY($1) ORDER BY id`;

interface WarningRow {
  filing: string;
  message: string;
  os_user: string | null;
  at: Date;
  detail: { cardId?: string; balanceCents?: number };
  author: string;
}

/**
 * An attempt row, its outcomes and its warnings as the ledger's records, the user the one the row names
 * (else its author). A row opcli cannot read stops every issuance, as a damaged ledger line does.
 */
function recordsOf(a: Attempt, warnings: WarningRow[]): LedgerRecord[] {
  const d = a.detail as Partial<AttemptDetail>;
  const common = { v: 1 as const, issuance: a.filing, key: a.key, user: a.osUser ?? d.user ?? a.author };
  const attempt = {
    ...common,
    type: 'attempt',
    at: a.at,
    claimId: d.claimId,
    orderNumber: d.orderNumber,
    bonus: d.bonus,
    amountCents: a.amountCents,
    amount: d.amount,
    currency: a.currency,
    email: d.email,
    name: d.name,
    customerId: a.customerId,
    profile: a.profile ?? '',
    shopUrl: d.shopUrl,
    storeId: a.storeId === '-' ? undefined : a.storeId,
    firstPath: d.firstPath,
    forced: a.forced ?? false,
    host: a.host ?? '',
  };
  const outcomes = a.outcomes.map((o) => {
    const od = (o.detail ?? {}) as Partial<OutcomeRecord>;
    return {
      ...common,
      user: od.user ?? o.author,
      type: 'outcome',
      at: o.at,
      status: o.status,
      path: o.path,
      cardId: o.cardId,
      balanceCents: od.balanceCents,
      triggerPosted: od.triggerPosted ?? false,
      watch: od.watch,
      possibleDoubleCredit: od.possibleDoubleCredit ?? false,
      error: o.error,
      notes: od.notes ?? [],
    };
  });
  const notes = warnings
    .filter((w) => w.filing === a.filing)
    .map((w) => ({
      ...common,
      user: w.os_user ?? w.author,
      type: 'warning',
      kind: 'possible-double-credit',
      at: w.at.toISOString(),
      message: w.message,
      cardId: w.detail.cardId,
      balanceCents: w.detail.balanceCents,
    }));
  return [attempt, ...outcomes, ...notes].map((r) => {
    const parsed = LedgerRecord.safeParse(r);
    if (!parsed.success) {
      throw new OpcliError(`The record database holds a credit row opcli cannot read (issuance ${a.filing}); nothing was sent.`, {
        exitCode: ExitCode.usage,
        hint: 'Whoever administers the database compares the row with `opcli giftcard history` of a known-good opcli; a row written by another program is not a credit opcli may act on.',
      });
    }
    return parsed.data as AttemptRecord | OutcomeRecord | WarningRecord;
  });
}
