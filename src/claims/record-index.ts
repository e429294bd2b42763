/**
 * The record of claims as a client of the record's index (src/record/store.ts): the terms each line is
 * found by, SQL-shaped (`WHERE key = $1`) as PostgreSQL answers them, and what a key's lines say of it.
 * Terms: `key:` (intents, outcomes, set-aside lines), `sim:` and `customer:` (intents), `row:` and
 * `like:` (a batch row's key under --key, its "looks like" fingerprint), `order:` (outcomes), `run:`,
 * `header` and `imported`.
 */
import { ExitCode, OpcliError } from '../core/errors.js';
import { emailIdentity, idIdentity } from '../core/identity.js';
import { authorName } from '../record/chain.js';
import type { DamagedLine, RecordWords } from '../record/damage.js';
import { actOn, attemptHash, claimMayExist, claimWeight, endAttempt, type Standing, startAttempt } from '../record/outcome.js';
import type { IndexedRecord, RecordFile } from '../record/store.js';
import {
  type DiskIntent,
  HEX64,
  type IntentLine,
  type OutcomeLine,
  parseRecordLine,
  type RecordHit,
  type RecordLine,
  type RecordState,
  type RunLine,
  headerLine,
  recordFileName,
  type ReadLine,
  type RecordStore,
  type BatchRow,
} from './record-format.js';

/** The terms a line of the record is found by. */
function claimTerms(r: RecordLine): string[] {
  if (r.type === 'header' || r.type === 'imported') return [r.type];
  if (r.type === 'run') return [`run:${r.run}`];
  if (!HEX64.test(r.key)) return [];
  const terms = [`key:${r.key}`];
  if (r.type === 'intent') {
    if (r.sim && HEX64.test(r.sim)) terms.push(`sim:${r.sim}`);
    if (r.email) terms.push(`customer:${emailIdentity(r.email)}`);
    if (r.row && HEX64.test(r.row)) terms.push(`row:${r.row}`);
    if (r.like && HEX64.test(r.like)) terms.push(`like:${r.like}`);
  } else if (r.type === 'outcome' && r.sourceOrderId) terms.push(`order:${orderTerm(r.sourceOrderId)}`);
  return terms;
}

/** An order id as `--order` compares it. */
export const orderTerm = (id: string): string => idIdentity(id).replace(/^#+ ?/, '');

/**
 * The record of claims of one store as its file (src/record/log.ts RecordFile): its lines' schema and terms, its name
 * and lock in the record folder, its header, and line 1 of another store's record (a file copied or renamed) is damage.
 */
export function claimFile(store: RecordStore): RecordFile<RecordLine> {
  const name = recordFileName(store);
  return {
    terms: 'claims-record-3',
    // The format this opcli writes (every schema's `v`); a line of a higher one stops a command (upgrade).
    version: 1,
    parse: parseRecordLine,
    setAsideOf: (r) => (r.type === 'set-aside' ? r.line : undefined),
    termsOf: claimTerms,
    isHeader: (r) => r.type === 'header',
    name,
    lock: name.replace(/\.jsonl$/, ''),
    words: CLAIM_WORDS,
    busy: (holder) =>
      new OpcliError(`Another opcli run is filing claims for this store (${holder}); nothing was sent.`, {
        exitCode: ExitCode.partial,
        hint: 'Let it finish, then run the same command again: what it filed is held, not filed twice. --lock-wait waits longer (a batch).',
      }),
    foreign: (r) => r.type === 'header' && (r.origin !== store.origin || r.storeId !== store.storeId),
    header: (at) => headerLine(store, at).slice(0, -1),
  };
}

/** Where a key stands by its lines (oldest first) and a torn last line naming it, by src/record/outcome.ts (undefined: nothing for it). */
export function standingOfKey(lines: readonly RecordLine[], torn: DamagedLine | undefined, resolve: (i: IntentLine) => IntentLine): RecordHit | undefined {
  let s: Standing<RecordState> | undefined;
  let intent: IntentLine | undefined;
  let outcome: OutcomeLine | undefined;
  let tornLine: number | undefined;
  const start = (state: 'sending' | 'torn', filing: string | undefined, line: IntentLine | undefined, at?: number): void => {
    const after = startAttempt(s, state, attemptHash(filing ?? ''), claimWeight);
    if (after === s) return;
    s = after;
    intent = line;
    outcome = undefined;
    if (at) tornLine = at;
  };
  for (const r of lines) {
    if (r.type === 'intent') start('sending', r.issuance, r as IntentLine);
    else if (r.type === 'set-aside') start('torn', r.issuance, undefined, r.line);
    else if (r.type === 'outcome' && s) {
      const after = endAttempt(s, r.status, attemptHash(r.issuance), claimWeight) as Standing<RecordState>;
      if (after === s) continue;
      if (after.state !== s.state) outcome = r;
      s = after;
    }
  }
  if (torn) start('torn', torn.issuance, undefined, torn.line);
  if (!s) return undefined;
  const state = actOn(s, 'uncertain', claimWeight);
  return { state, intent: intent && resolve(intent), tornLine, outcome: state === 'sending' ? undefined : outcome };
}

/** A row's standing in its batch (ClaimsRecord.batchRow), from where its attempts in the batch stand: a torn intent may have been sent. */
export function batchRowOf(hit: RecordHit | undefined): BatchRow | undefined {
  if (!hit) return undefined;
  const i = hit.intent;
  const status = hit.state === 'torn' ? 'uncertain' : hit.state;
  return { status, line: i?.line, at: i?.at, tag: i?.tag, claim: i?.claim, sourceOrderId: hit.outcome?.sourceOrderId, reason: hit.outcome?.error };
}

/** An intent with its run's details filled in. */
export function resolveIntent(i: DiskIntent, run: RunLine | undefined): IntentLine {
  return {
    ...i,
    // The author as the OS names the uid the line gives, never its own `user` text alone (src/record/chain.ts).
    user: authorName(i.uid ?? run?.uid, i.user ?? run?.user ?? '?'),
    host: i.host ?? run?.host ?? '?',
    profile: i.profile ?? run?.profile ?? '?',
    source: i.source ?? run?.source ?? '?',
    journal: i.journal ?? run?.journal,
    journalId: run?.journalId,
  };
}

/** The questions the record of claims open as `fd` answers from its index (src/record/store.ts). */
export class ClaimQuestions {
  /** Batch runs by id, as asked, read or started (a few per day). */
  readonly runs = new Map<string, RunLine>();
  private journals: Set<string> | undefined;

  /** `q`: the record open to ask (src/record/store.ts openRecord). */
  constructor(readonly q: IndexedRecord<RecordLine>) {}

  /** The lines that hold any of `terms` (`key:`, `customer:`, `order:`), in order, intents resolved. */
  linesOf(...terms: string[]): ReadLine[] {
    return this.q.find(...terms).map((r) => (r.type === 'intent' ? this.resolve(r) : r));
  }

  /** An intent as read, its run's details filled in. */
  resolve(i: DiskIntent): IntentLine {
    return resolveIntent(i, i.run === undefined ? undefined : this.run(i.run));
  }

  /** A batch run's line, by its id. */
  private run(id: string): RunLine | undefined {
    let run = this.runs.get(id);
    if (!run && !this.noRun.has(id)) {
      run = this.q.find(`run:${id}`).findLast((r): r is RunLine => r.type === 'run' && r.run === id);
      if (run) this.runs.set(id, run);
      else this.noRun.add(id);
    }
    return run;
  }

  /** Run ids asked of and not found (an imported line's `import.…` id). */
  private readonly noRun = new Set<string>();

  /** The run of a batch row's filing id (`<run>.<line>`: plan.ts). */
  private runOf(filing: string): RunLine | undefined {
    const dot = filing.indexOf('.');
    return dot > 0 ? this.run(filing.slice(0, dot)) : undefined;
  }

  /** Journals already read into the record (absolute paths). */
  get imported(): Set<string> {
    this.journals ??= new Set(this.q.find('imported').flatMap((r) => (r.type === 'imported' ? [r.journal] : [])));
    return this.journals;
  }

  /** What the record holds for a key, a torn last line among `damaged` included. */
  hitOf(key: string, damaged: DamagedLine[]): RecordHit | undefined {
    const torn = damaged.find((d) => d.kind === 'torn' && d.key === key);
    return standingOfKey(this.q.find(`key:${key}`), torn, (i) => this.resolve(i));
  }

  /**
   * What the earlier runs of the batch `batch` (docs/spec-choices.md#the-same-batch) did with a row: by its row key, or
   * (`like`) the batch's last row of that "looks like" fingerprint whose claim may exist. Undefined: never tried.
   */
  batchRow(batch: string, by: { key: string } | { like: string }, damaged: DamagedLine[]): BatchRow | undefined {
    if ('like' in by) {
      const tried = new Set<string>();
      const intents = this.q.find(`like:${by.like}`).filter((r): r is DiskIntent => r.type === 'intent' && r.like === by.like);
      for (const i of intents.reverse()) {
        const key = i.row ?? i.key;
        if (tried.has(key) || this.resolve(i).journal !== batch) continue;
        tried.add(key);
        const row = this.batchRow(batch, { key }, damaged);
        if (row && claimMayExist(row.status)) return row;
      }
      return undefined;
    }
    const lines = this.q.find(`key:${by.key}`, `row:${by.key}`);
    const mine = lines.filter((r): r is DiskIntent => r.type === 'intent' && (r.row ?? r.key) === by.key && this.resolve(r).journal === batch);
    if (mine.length === 0) return undefined;
    const filings = new Set(mine.map((i) => i.issuance));
    const keys = [...new Set(mine.map((i) => i.key))];
    // Under --key the outcomes are found by the content's key, which the row key is not.
    const all = keys.length === 1 && keys[0] === by.key ? lines : this.q.find(...keys.map((k) => `key:${k}`));
    // An outcome of one of its intents, or a set-aside line of one of its runs' intents cut short.
    const ofBatch = (filing: string | undefined) => filing !== undefined && (filings.has(filing) || this.runOf(filing)?.journal === batch);
    const attempts = all.filter((r) =>
      r.type === 'intent' ? filings.has(r.issuance) && (r.row ?? r.key) === by.key : (r.type === 'outcome' || r.type === 'set-aside') && ofBatch(r.issuance),
    );
    const torn = damaged.find((d) => d.kind === 'torn' && d.key !== undefined && keys.includes(d.key) && ofBatch(d.issuance));
    return batchRowOf(standingOfKey(attempts, torn, (i) => i));
  }

  /** The intent of the last claim sent with a similarity fingerprint. */
  lastIntentOf(sim: string): IntentLine | undefined {
    const last = this.q.find(`sim:${sim}`).findLast((r) => r.type === 'intent' && r.sim === sim);
    return last?.type === 'intent' ? this.resolve(last) : undefined;
  }
}

/** The record of claims in the words of a refusal (a damaged line, a file that shrank) and of its repair. */
export const CLAIM_WORDS: RecordWords = {
  what: 'record of claims',
  command: 'opcli claims repair',
  risk: 'a line opcli cannot read could be a claim already filed, and filing without it could file it twice',
  repair:
    'Run `opcli claims repair` to set the damaged line(s) aside (a copy of the file is kept; the claims they name are then held as uncertain), or follow "A damaged record" in docs/guides/batch-claims.md.',
  detailsKey: 'record',
};
