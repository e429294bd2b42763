/**
 * The first run of this version over a journal of an earlier one reads its filed and uncertain rows
 * into the record of claims (record.ts), so a copy of a file filed before the record existed is held
 * too. Once per journal: the record names each journal it took in. No prompt, no print.
 */
import { open } from 'node:fs/promises';
import { hashOfRobust, recordSimilarity, robustJson } from './identity.js';
import type { Journal } from './journal.js';
import { itemWords } from './plan.js';
import type { ClaimRecord, IntentLine, OutcomeLine } from './record.js';
import type { OfflineClaim } from '../schemas.js';

/** Lines written at a time (a journal of a million rows is not held in memory). */
const CHUNK = 2_000;

/** The input a journal at its default path belongs to (`claims.csv.journal.jsonl` → `claims.csv`), else the journal. */
function sourceOf(journalPath: string): string {
  return journalPath.endsWith('.journal.jsonl') ? journalPath.slice(0, -'.journal.jsonl'.length) : journalPath;
}

/**
 * Reads the rows `journal` holds as filed, uncertain or sent (of this service's sections: the
 * journal's own index says which) into `record`, unless it was read in before or the record holds
 * them already. Returns how many were taken in.
 */
export async function importJournal(record: ClaimRecord, journal: Journal, profile: string, user: string, host: string): Promise<number> {
  if (journal.priorEntries === 0 || record.imported.has(journal.path)) return 0;
  const handle = await open(journal.path, 'r');
  let taken = 0;
  let pending: (IntentLine | OutcomeLine)[] = [];
  const take = async (text: string, offset: number) => {
    let e: { key?: unknown; status?: unknown; line?: unknown; at?: unknown; tag?: unknown; claim?: unknown };
    try {
      e = JSON.parse(text);
    } catch {
      return;
    }
    if (e?.status !== 'sending' || typeof e.key !== 'string' || typeof e.line !== 'number' || typeof e.claim !== 'object' || e.claim === null) return;
    const prior = journal.priorOutcome(e.key);
    // Only the row's last sending, in a section of this service, whose claim exists or may exist.
    if (!prior || prior.sendOffset !== offset || prior.status === 'rejected' || prior.status === 'not_sent') return;
    const claim = e.claim as OfflineClaim;
    const key = e.tag ? hashOfRobust(robustJson(claim)) : e.key;
    if (record.has(key)) return;
    const at = typeof e.at === 'string' ? e.at : new Date().toISOString();
    const issuance = `import.${e.key.slice(0, 16)}.${e.line}`;
    const detail = prior.status === 'filed' ? await journal.priorDetail(prior) : {};
    pending.push(
      {
        v: 1,
        issuance,
        key,
        type: 'intent',
        at,
        user,
        host,
        profile,
        source: sourceOf(journal.path),
        line: e.line,
        journal: journal.path,
        sim: recordSimilarity(claim),
        email: typeof claim.customer?.email === 'string' ? claim.customer.email : undefined,
        item: claim.item ? itemWords(claim) : undefined,
      },
      {
        v: 1,
        issuance,
        key,
        type: 'outcome',
        at,
        status: prior.status === 'filed' ? 'filed' : 'uncertain',
        sourceOrderId: detail.sourceOrderId,
        error: prior.status === 'filed' ? undefined : 'recorded as sent without an answer by the journal it was read from',
      },
    );
    taken++;
    if (pending.length >= CHUNK) {
      record.importLines(pending);
      pending = [];
    }
  };
  try {
    const chunk = Buffer.allocUnsafe(256 * 1024);
    let rest: Buffer = Buffer.alloc(0);
    let restOffset = 0;
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const buffer = rest.length ? Buffer.concat([rest, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      let start = 0;
      let nl = buffer.indexOf(10);
      while (nl !== -1) {
        await take(buffer.toString('utf8', start, nl), restOffset + start);
        start = nl + 1;
        nl = buffer.indexOf(10, start);
      }
      rest = Buffer.from(buffer.subarray(start));
      restOffset += start;
    }
  } finally {
    await handle.close();
  }
  record.importLines(pending, { journal: journal.path, entries: taken });
  return taken;
}
