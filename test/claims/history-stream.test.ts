/**
 * `claims history` streams (issue 40): the claims of a record are handed over one at a time, and a
 * claim left open longer than the window (rejected, not sent, uncertain) is answered whole from the
 * record's index. Over families of records (attempts of a few keys, outcomes in any order, some never
 * answered), what the stream hands over, whatever the window, is what gathering every filing first
 * (the way history worked before) gives; `--email` and `--order` answered from the index give the same
 * claims as a filter over the whole record. The JSON it writes item by item is printJson's, byte for byte.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClaimRecord } from '../../src/claims/record.js';
import { type ClaimEntry, type ClaimHistoryFilter, type ClaimHistoryRow, filingFilter, openClaimHistory } from '../../src/claims/history.js';
import { batchIntentLine, headerLine, outcomeLine, type RecordStatus, recordFileName } from '../../src/claims/record-format.js';
import { JsonArrayWriter, printJson } from '../../src/core/output.js';
import { LogWriter, openLog } from '../../src/record/log.js';
import { tempConfigDir } from '../helpers.js';

const store = { origin: 'https://api.example', storeId: 'store_1' };
const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const STATUSES: RecordStatus[] = ['filed', 'rejected', 'uncertain', 'not_sent'];

/** One event of a family: an attempt of key `k`, or the outcome of the `n`th attempt still unanswered. */
type Event = { intent: number } | { outcome: number; status: number };

/** Writes a record of `events` (sealed, as opcli appends) in `dir`; returns the lines' text for the oracle. */
function writeRecord(dir: string, events: Event[]): void {
  const fd = openLog({ dir }, recordFileName(store), 'record of claims', true) as number;
  let text = headerLine(store, '2026-01-01T00:00:00.000Z');
  text += `${JSON.stringify({ v: 1, type: 'run', run: 'r1', at: '2026-01-01T00:00:00.000Z', user: 'alice', host: 'desk', profile: 'default', source: '/data/a.csv' })}\n`;
  const open: { issuance: string; key: string }[] = [];
  events.forEach((e, i) => {
    const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
    if ('intent' in e) {
      const key = hex(`k${e.intent}`);
      const issuance = `f${i}`;
      open.push({ issuance, key });
      text += batchIntentLine(
        { issuance, key, run: 'r1', line: i + 2, sim: hex(`s${e.intent}`), email: `cust${e.intent % 3}@example.com`, item: `Kettle ${e.intent}` },
        at,
      );
    } else if (open.length) {
      const [a] = open.splice(e.outcome % open.length, 1);
      const status = STATUSES[e.status % STATUSES.length] as RecordStatus;
      text += outcomeLine({ issuance: a?.issuance as string, key: a?.key as string, status, sourceOrderId: status === 'filed' ? `SO-${i}` : undefined }, at);
    }
  });
  new LogWriter().append(fd, text);
}

/** The claims as history gathered them before it streamed: every filing with its outcome, then grouped by key up to a filed one. */
function gathered(dir: string, configDir: string, filter: ClaimHistoryFilter): ClaimEntry[] {
  const rows: ClaimHistoryRow[] = [];
  // The oracle reads the file itself: intents in order, each with the strongest outcome of its filing.
  const record = ClaimRecord.openSync({ place: { dir, configDir }, store, tolerateDamage: true });
  const lines = record.all();
  record.close();
  const rank = (s: string) => (s === 'filed' ? 2 : s === 'uncertain' ? 1 : 0);
  const outcomes = new Map<string, { status: RecordStatus; sourceOrderId?: string }>();
  for (const l of lines) {
    if (l.type !== 'outcome') continue;
    const had = outcomes.get(l.issuance);
    if (!had || (had.status !== 'filed' && rank(l.status) > rank(had.status))) outcomes.set(l.issuance, l);
  }
  for (const l of lines) {
    if (l.type !== 'intent') continue;
    const o = outcomes.get(l.issuance);
    rows.push({
      key: l.key,
      at: l.at,
      status: o?.status ?? 'uncertain',
      sourceOrderId: o?.sourceOrderId,
      email: l.email,
      item: l.item,
      profile: l.profile,
      user: l.user,
      host: l.host,
      source: l.source,
      line: l.line,
      forced: !!l.forced,
      error: o ? undefined : 'no outcome recorded: the run stopped after sending it, the claim may exist',
    });
  }
  const claims: ClaimHistoryRow[][] = [];
  const open = new Map<string, ClaimHistoryRow[]>();
  for (const row of rows) {
    let attempts = open.get(row.key);
    if (!attempts) {
      attempts = [];
      claims.push(attempts);
      open.set(row.key, attempts);
    }
    attempts.push(row);
    if (row.status === 'filed') open.delete(row.key);
  }
  const matches = filingFilter(filter);
  return claims
    .filter((a) => a.some(matches))
    .map((a) => {
      const { key: _, ...latest } = a[a.length - 1] as ClaimHistoryRow;
      return { ...latest, events: a.map(({ key: _k, email: _e, item: _i, ...event }) => event) };
    });
}

function streamed(dir: string, configDir: string, filter: ClaimHistoryFilter, window: number): ClaimEntry[] {
  const history = openClaimHistory({ place: { dir, configDir }, store }, window);
  const out: ClaimEntry[] = [];
  try {
    history.each(filter, (c) => out.push(c));
  } finally {
    history.close();
  }
  return out;
}

const events = fc.array(fc.oneof(fc.record({ intent: fc.nat({ max: 5 }) }), fc.record({ outcome: fc.nat({ max: 9 }), status: fc.nat({ max: 3 }) })), {
  minLength: 1,
  maxLength: 40,
});

describe('claims history, streamed', () => {
  it('hands over what gathering every filing first gives, whatever the window; --email and --order from the index give the filter over the whole record', () => {
    fc.assert(
      fc.property(events, fc.nat({ max: 4 }), (family, window) => {
        const temp = tempConfigDir();
        const configDir = temp.dir;
        const dir = join(configDir, 'records');
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        writeRecord(dir, family);
        for (const filter of [{}, { email: 'CUST1@example.com' }, { order: 'so-3' }, { since: Date.UTC(2026, 0, 1, 0, 10) }] as ClaimHistoryFilter[]) {
          const want = gathered(dir, configDir, filter).map(({ error, ...c }) => ({ ...c, uncertain: error !== undefined }));
          const got = streamed(dir, configDir, filter, window).map(({ error, ...c }) => ({ ...c, uncertain: error !== undefined }));
          expect(got).toEqual(want);
        }
        temp.cleanup();
      }),
      {
        numRuns: 60,
        // Found by a random seed: an earlier attempt filed after a later one was, window 1.
        examples: [[[{ intent: 0 }, { intent: 0 }, { outcome: 1, status: 0 }, { outcome: 0, status: 0 }], 1]],
      },
    );
  });
});

describe('JSON written item by item', () => {
  it('is printJson of the whole, byte for byte', () => {
    const value = fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(undefined), fc.array(fc.string())));
    fc.assert(
      fc.property(fc.string(), fc.array(value, { maxLength: 5 }), (record, items) => {
        let whole = '';
        printJson({ out: (t: string) => (whole += t) } as never, { record, claims: items });
        let streamedText = '';
        const json = new JsonArrayWriter({ out: (t: string) => (streamedText += t) }, { record }, 'claims');
        for (const item of items) json.item(item);
        json.end();
        expect(streamedText).toBe(whole);
      }),
    );
  });
});
