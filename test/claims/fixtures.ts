/** Shared fixtures of the claims tests: claim rows, CSV files, and the claims a sandbox received. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { type ManualClock, manualClock, type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';
import { sandboxProfile, tempConfigDir } from '../helpers.js';
import { missingInfra } from '../infra/index.js';
import { type TeamRecord, teamRecord } from '../giftcard/fixture.js';

/** Where the record of claims is: the file record in the config folder, or the team's PostgreSQL (src/record-pg/claims.ts). */
export type RecordBackend = 'file' | 'database';
/** The backends a suite runs against: the database only where PostgreSQL is installed (test/infra/postgres.ts). */
export const RECORD_BACKENDS: RecordBackend[] = missingInfra('pg_ctl') ? ['file'] : ['file', 'database'];

/** A describe block's title for a backend. */
export const onBackend = (backend: RecordBackend): string => (backend === 'file' ? 'the record of claims in files' : 'the record of claims in PostgreSQL');

/** The file record's files in a folder: none may exist when the record is the database. */
export function recordFiles(folder: string): string[] {
  return readdirSync(folder).filter((n) => /^claims-record-[0-9a-f]{16}\.jsonl$/.test(n));
}

export const COLUMNS = [
  'customer.email',
  'customer.phoneNumber',
  'item.name',
  'item.price',
  'item.details',
  'item.images',
  'warranty.dateOfPurchase',
  'warranty.warrantyPeriod',
  'shippingAddress.firstName',
  'shippingAddress.lastName',
  'shippingAddress.address1',
  'shippingAddress.city',
  'shippingAddress.zip',
  'shippingAddress.country',
  'signature',
  'salesChannel',
  'claimCategory',
  'issueType',
  'resolution',
  'options.requireCustomerSignature',
] as const;

/** A valid row whose content is unique to `i` (item.details carries it). */
export function row(i: number, overrides: Partial<Record<(typeof COLUMNS)[number], string>> = {}): Record<string, string> {
  return {
    'customer.email': `customer${i}@example.com`,
    'customer.phoneNumber': '',
    'item.name': `Kettle ${i}`,
    'item.price': '49.99',
    'item.details': `row ${i}`,
    'item.images': '',
    'warranty.dateOfPurchase': '2024-05-01T10:00:00Z',
    'warranty.warrantyPeriod': 'P1Y',
    'shippingAddress.firstName': 'Alice',
    'shippingAddress.lastName': 'Example',
    'shippingAddress.address1': '1 Main St',
    'shippingAddress.city': 'Springfield',
    'shippingAddress.zip': '62701',
    'shippingAddress.country': 'United States',
    signature: '',
    salesChannel: 'IN_STORE',
    claimCategory: 'WARRANTY',
    issueType: 'DEFECTIVE_ITEM',
    resolution: 'RESHIP',
    'options.requireCustomerSignature': 'false',
    ...overrides,
  };
}

/** Writes rows as CSV with the standard columns. */
export function writeCsv(path: string, rows: Record<string, string>[], options: { crlf?: boolean; bom?: boolean } = {}): void {
  const text = stringify([[...COLUMNS], ...rows.map((r) => COLUMNS.map((c) => r[c] ?? ''))], { record_delimiter: options.crlf ? '\r\n' : '\n' });
  writeFileSync(path, `${options.bom ? '\ufeff' : ''}${text}`);
}

/** A CSV of `n` distinct valid rows. */
export function writeRows(path: string, n: number): void {
  writeCsv(
    path,
    Array.from({ length: n }, (_, i) => row(i + 1)),
  );
}

/** Bodies of every claim request the sandbox received (whatever it answered). */
export function claimBodies(sandbox: Sandbox): string[] {
  return sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline').map((r) => r.body);
}

/** Duplicated values of a list. */
export function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  const dup: string[] = [];
  for (const v of values) {
    if (seen.has(v)) dup.push(v);
    seen.add(v);
  }
  return dup;
}

/** The `row N` marker of a claim body. */
export function rowOf(body: string): number {
  return Number(/row (\d+)/.exec(JSON.parse(body).item.details)?.[1]);
}

/** Parses --jsonl output: the rows' results, without the summary on the last line (`summaryLine`). */
export function results(
  stdout: string,
): { line: number; status: string; sourceOrderId?: string; error?: string; earlier?: boolean; errors?: { path: string; message: string }[] }[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => !('summary' in r));
}

/** The summary --jsonl prints as its last line. */
export function summaryLine(stdout: string): Record<string, unknown> | undefined {
  const last = stdout.split('\n').filter(Boolean).at(-1);
  return last ? (JSON.parse(last) as { summary?: Record<string, unknown> }).summary : undefined;
}

/**
 * What the record of claims in `configDir` holds of each input line of the batch named `batch` (its
 * journal's path: docs/spec-choices.md#the-same-batch), by its last attempt: `sending` (an intent
 * without an outcome: it may have been sent) or its outcome, as it reached the disk.
 */
export function batchByLine(batch: string, configDir = dirname(batch)): Map<number, { status: string; sourceOrderId?: string }> {
  const out = new Map<number, { status: string; sourceOrderId?: string }>();
  const runs = new Set<string>();
  const lineOf = new Map<string, number>();
  for (const name of readdirSync(configDir).filter((n) => /^claims-record-[0-9a-f]+\.jsonl$/.test(n))) {
    for (const text of readFileSync(join(configDir, name), 'utf8').split('\n')) {
      let r: { type?: string; run?: string; journal?: string; issuance?: string; line?: number; status?: string; sourceOrderId?: string };
      try {
        r = JSON.parse(text);
      } catch {
        continue; // a torn line
      }
      if (r.type === 'run' && r.journal === batch) runs.add(r.run as string);
      else if (r.type === 'intent' && r.line !== undefined && (runs.has(r.run as string) || r.journal === batch)) {
        lineOf.set(r.issuance as string, r.line);
        out.set(r.line, { status: 'sending' });
      } else if (r.type === 'outcome' && lineOf.has(r.issuance as string))
        out.set(lineOf.get(r.issuance as string) as number, { status: r.status as string, sourceOrderId: r.sourceOrderId });
    }
  }
  return out;
}

/**
 * The set-up every batch test file shares: one sandbox for the file, and per test a fresh config
 * folder with a logged-in profile, an empty request log and no faults. `bind` hands the file its
 * `sandbox` and `dir`; `reset` undoes per-test sandbox settings the file changes; `sandbox` gives the
 * sandbox's options (a virtual clock).
 */
export function claimsSuite(
  bind: (s: { sandbox: Sandbox; dir: string }) => void,
  options: { reset?: (sandbox: Sandbox) => void; sandbox?: () => SandboxOptions; record?: RecordBackend } = {},
) {
  let sandbox: Sandbox;
  let dir = '';
  /** With the record in PostgreSQL: a database of its own for each test (fixture.ts teamRecord), the first member's role. */
  let team: TeamRecord | undefined;
  let cleanup = () => {};
  let claimsBefore = 0;
  beforeAll(async () => {
    sandbox = await startSandbox(options.sandbox?.());
    bind({ sandbox, dir });
  });
  afterAll(async () => {
    await sandbox.close();
  });
  beforeEach(async () => {
    ({ dir, cleanup } = tempConfigDir());
    await sandboxProfile(sandbox, dir);
    sandbox.resetLog();
    sandbox.setFaults([]);
    options.reset?.(sandbox);
    claimsBefore = sandbox.claims.length;
    if (options.record === 'database') team = await teamRecord();
    bind({ sandbox, dir });
  });
  afterEach(() => {
    // A test whose record is the database wrote no file record: its commands really used the database.
    if (team) expect(recordFiles(dir), 'a file record beside the database').toEqual([]);
    team = undefined;
    cleanup();
  });
  return {
    /** Claims the sandbox created during this test. */
    created: () => sandbox.claims.slice(claimsBefore),
    /** The environment of a run against this test's config folder. */
    env: (extra: Record<string, string> = {}) => ({ OPCLI_CONFIG_DIR: dir, ...team?.env(0), ...extra }),
    /** The team's record of this test (the database backend). */
    team: () => team,
  };
}

/**
 * A sandbox of its own on a clock the test moves, with a logged-in config folder: answers that are
 * late by its clock stay held while the clock stands, for as long as the test wants, however loaded
 * the machine. `pump()` moves the clock on (30 ms a real millisecond) until the returned stop.
 */
export async function heldSandbox(): Promise<{ sandbox: Sandbox; clock: ManualClock; dir: string; pump: () => () => void; close: () => Promise<void> }> {
  const clock = manualClock();
  const held = await startSandbox({ clock });
  const config = tempConfigDir();
  await sandboxProfile(held, config.dir);
  return {
    sandbox: held,
    clock,
    dir: config.dir,
    pump: () => {
      const timer = setInterval(() => clock.advance(30), 1);
      return () => clearInterval(timer);
    },
    close: async () => {
      await held.close();
      config.cleanup();
    },
  };
}

/**
 * batchByLine on either backend: the file record in `configDir`, or (`team`) what the team's record
 * database holds of the batch's intents (their `detail` names the batch) and their last outcomes.
 */
export async function batchLines(batch: string, configDir: string, team?: TeamRecord): Promise<Map<number, { status: string; sourceOrderId?: string }>> {
  if (!team) return batchByLine(batch, configDir);
  const text = await team.pg.admin(
    `SELECT i.line || ' ' || coalesce((SELECT o.status || ' ' || coalesce(o.source_order_id, '') FROM opcli.outcomes o WHERE o.filing = i.filing ORDER BY o.id DESC LIMIT 1), 'sending')
       FROM opcli.intents i WHERE i.kind = 'claim' AND i.line IS NOT NULL AND i.detail->>'journal' = '${batch.replace(/'/g, "''")}' ORDER BY i.id`,
    team.database,
  );
  const out = new Map<number, { status: string; sourceOrderId?: string }>();
  for (const row of text.split('\n').filter((l) => l.trim())) {
    const [line, status, sourceOrderId] = row.trim().split(' ');
    out.set(Number(line), { status: status as string, ...(sourceOrderId ? { sourceOrderId } : {}) });
  }
  return out;
}

/**
 * Writes `${input}.journal.jsonl` as opcli 0.2.0 wrote a batch's journal (a v3 header naming the
 * record's service and store, then each row's `sending` entry and outcome), from what the record of
 * claims in `configDir` holds of that batch: this version writes no journal, but reads one it finds.
 */
export function journalOf(input: string, configDir = dirname(input)): string {
  const [name] = readdirSync(configDir).filter((n) => /^claims-record-[0-9a-f]+\.jsonl$/.test(n));
  const records = readFileSync(join(configDir, name as string), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  return writeJournal(input, records[0], records);
}

/** journalOf on either backend: the file record in `configDir`, or (`team`) the team's record database's intents and outcomes. */
export async function journalOn(input: string, configDir: string, team?: TeamRecord): Promise<string> {
  if (!team) return journalOf(input, configDir);
  const text = await team.pg.admin(
    `SELECT json_build_object('origin', i.origin, 'storeId', i.store_id, 'issuance', i.filing, 'key', i.key, 'row', i.detail->>'row', 'line', i.line,
            'like', i.detail->>'like', 'tag', (i.detail->>'tag')::int, 'at', i.at, 'claim', i.detail->'claim', 'journal', i.detail->>'journal',
            'outcomes', coalesce((SELECT json_agg(json_build_object('status', o.status, 'sourceOrderId', o.source_order_id, 'at', o.at) ORDER BY o.id)
                                  FROM opcli.outcomes o WHERE o.filing = i.filing), '[]'))
       FROM opcli.intents i WHERE i.kind = 'claim' ORDER BY i.id`,
    team.database,
  );
  const intents = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const records = intents.flatMap((i) => [
    { ...i, type: 'intent', row: i.row ?? undefined, like: i.like ?? undefined, tag: i.tag ?? undefined },
    ...i.outcomes.map((o: Record<string, unknown>) => ({ ...o, type: 'outcome', issuance: i.issuance, sourceOrderId: o.sourceOrderId ?? undefined })),
  ]);
  const first = intents[0] ?? {};
  return writeJournal(input, { origin: first.origin, storeId: first.storeId === '-' ? null : first.storeId, created: first.at }, records);
}

/** The journal 0.2.0 would have written of the batch `${input}.journal.jsonl`, from a record's lines (a batch's intents: of its runs, or naming it). */
// biome-ignore lint/suspicious/noExplicitAny: a record's lines as parsed JSON, file or database alike
function writeJournal(input: string, header: { origin?: string; storeId?: string | null; created?: string }, records: Record<string, any>[]): string {
  const path = `${input}.journal.jsonl`;
  const runs = new Set(records.filter((r) => r.type === 'run' && r.journal === path).map((r) => r.run));
  const rows = new Map<string, { key: string; line: number }>();
  const lines = [
    {
      journal: 'opcli claims',
      version: 3,
      created: header.created,
      id: 'f'.repeat(16),
      service: { origin: header.origin, storeId: header.storeId, profile: 'default' },
    },
  ];
  for (const r of records) {
    if (r.type === 'intent' && (runs.has(r.run) || r.journal === path)) {
      rows.set(r.issuance, { key: r.row ?? r.key, line: r.line });
      lines.push({
        key: r.row ?? r.key,
        line: r.line,
        status: 'sending',
        ...(r.like ? { sim: r.like } : {}),
        ...(r.tag ? { tag: r.tag } : {}),
        at: r.at,
        claim: r.claim,
      } as never);
    } else if (r.type === 'outcome' && rows.has(r.issuance))
      lines.push({ ...rows.get(r.issuance), status: r.status, ...(r.sourceOrderId ? { sourceOrderId: r.sourceOrderId } : {}), at: r.at } as never);
  }
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`, { mode: 0o600 });
  return path;
}
