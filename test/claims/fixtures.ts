/** Shared fixtures of the claims tests: claim rows, CSV files, and the claims a sandbox received. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** The last journal status of each line. */
export function journalByLine(path: string): Map<number, { status: string; sourceOrderId?: string }> {
  const out = new Map<number, { status: string; sourceOrderId?: string }>();
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (!text.trim()) continue;
    try {
      const e = JSON.parse(text);
      out.set(e.line, e);
    } catch {
      // torn line
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
