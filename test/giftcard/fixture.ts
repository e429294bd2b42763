/** Shared setup of the giftcard tests: a sandbox, a temp config folder with its profile, and helpers. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, expect } from 'vitest';
import type { ResolvedProfile } from '../../src/config/profile.js';
import { openLedger } from '../../src/giftcard/ledger-db.js';
import { setupRecord } from '../../src/record-pg/database.js';
import { parseRecordUrl } from '../../src/record-pg/url.js';
import { missingInfra, type Postgres, startPostgres } from '../infra/index.js';
import { LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { manualClock, startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/types.js';
import { type RunOptions, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

/**
 * Where a fixture's gift card ledger is: the config folder's file, or the team's record in a real
 * PostgreSQL (test/infra/postgres.ts; OPCLI_RECORD_URL of a member role in `env`).
 */
export type LedgerBackend = 'file' | 'database';

/** The backends a suite runs its exactly-once cases on (the database where PostgreSQL is installed: CI installs it). */
export const BACKENDS: LedgerBackend[] = missingInfra('pg_ctl') ? ['file'] : ['file', 'database'];

/** The PostgreSQL of this test file, started on first use and stopped by giftcardSuite after the file. */
let server: Promise<Postgres> | undefined;
const MEMBERS = [0, 1].map((i) => ({ name: `desk${i}_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` }));

/** A team's record: a new database set up (`record setup`) for two member roles, and each member's env. */
export interface TeamRecord {
  pg: Postgres;
  database: string;
  members: typeof MEMBERS;
  /** Member `i`'s env: OPCLI_RECORD_URL with its password, and a HOME with no ~/.pgpass. */
  env(i: number): Record<string, string>;
}

/** A new database holding a team's record on this file's PostgreSQL. */
export async function teamRecord(): Promise<TeamRecord> {
  server ??= startPostgres().then(async (pg) => {
    for (const m of MEMBERS) await pg.admin(`CREATE ROLE ${m.name} LOGIN PASSWORD '${m.password}'`);
    return pg;
  });
  const pg = await server;
  const database = `gc_${randomBytes(4).toString('hex')}`;
  await pg.admin(`CREATE DATABASE ${database}`);
  await setupRecord(
    { url: `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, password: pg.superuserPassword },
    MEMBERS.map((m) => m.name),
    { env: {}, cwd: '/' },
  );
  const env = (i: number) => ({
    OPCLI_RECORD_URL: `postgresql://${MEMBERS[i]!.name}:${MEMBERS[i]!.password}@127.0.0.1:${pg.port}/${database}`,
    HOME: '/nonexistent',
  });
  return { pg, database, members: MEMBERS, env };
}

export interface Fixture {
  /** The team's record the ledger is in (`ledger: 'database'`). */
  record?: TeamRecord;
  sandbox: Sandbox;
  dir: string;
  env: Record<string, string>;
  run(argv: string[], options?: RunOptions): ReturnType<typeof runOpcli>;
  /** Clears a profile setting (or the token) to switch a path off. */
  unset(...keys: string[]): Promise<void>;
  /** Provider requests the sandbox received, as "METHOD path". */
  providerCalls(): string[];
  /** Every stdout/stderr captured so far, for secret scans. */
  captured: string[];
  /**
   * The manual clock shared by the sandbox and opcli (with `fakeClock`), in ms: setting `now` (or
   * `advance`) moves it forward and fires the timers (the sandbox's and opcli's) that fall due on the way.
   */
  clock: { now: number; advance(ms: number): void; readonly pending: number };
  close(): Promise<void>;
}

/** The fixtures started since the last test ended; giftcardSuite closes them. */
const started: Fixture[] = [];

/**
 * The set-up every gift card test file shares: after each test, each fixture it started is closed,
 * once what it printed has been checked for the provider token (unless `scanSecrets` is false).
 */
export function giftcardSuite(options: { scanSecrets?: boolean } = {}): void {
  afterEach(async () => {
    for (const fx of started.splice(0)) {
      if (options.scanSecrets !== false) {
        // No test may leak the provider token into anything it printed.
        const token = fx.sandbox.store.providerToken;
        for (const text of fx.captured) expect(text).not.toContain(token);
      }
      // A fixture whose ledger is the database wrote no ledger file: its commands really used the database.
      if (fx.record) expect(existsSync(join(fx.dir, LEDGER_FILE)), 'a ledger file beside the database').toBe(false);
      await fx.close();
    }
  });
  afterAll(async () => {
    const pg = server;
    server = undefined;
    await (await pg)?.stop();
  });
}

/**
 * What a fixture's ledger holds, as ledger records, oldest first: its file's lines, or what the team's
 * record database gives back for them (read as member 0, src/giftcard/ledger-db.ts): one assertion for both backends.
 */
export async function recordedLines(fx: Fixture): Promise<Record<string, unknown>[]> {
  if (!fx.record) return ledgerLines(fx.dir);
  const env = fx.record.env(0);
  const ledger = await openLedger(fx.dir, { record: parseRecordUrl(env.OPCLI_RECORD_URL as string, 'OPCLI_RECORD_URL') } as ResolvedProfile, { env, cwd: '/' });
  try {
    return (await ledger.readAll()).records;
  } finally {
    await ledger.close();
  }
}

/** The ledger's records in `dir`, oldest first. */
export function ledgerLines(dir: string): Record<string, unknown>[] {
  return readFileSync(join(dir, LEDGER_FILE), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/**
 * Starts a sandbox and a logged-in profile pointing at it. With `fakeClock`, the sandbox (trigger
 * delays, fault latency, token expiry) and opcli's waits and deadlines run on one manual clock that
 * opcli's sleeps (and the test, through `clock`) move forward: no real waiting. `unset` clears
 * profile settings before the test starts (as `Fixture.unset` does), to switch a path off: with
 * `['trigger-id']` an issuance goes straight to the credit API. The file's giftcardSuite() closes it after the test.
 */
export async function fixture(options: SandboxOptions & { fakeClock?: boolean; unset?: string[]; ledger?: LedgerBackend } = {}): Promise<Fixture> {
  const { fakeClock, unset, ledger, ...sandboxOptions } = options;
  const manual = manualClock(1_800_000_000_000);
  const clock = {
    get now() {
      return manual.now();
    },
    set now(to: number) {
      manual.advance(to - manual.now());
    },
    advance: (ms: number) => manual.advance(ms),
    /** Timers (the sandbox's and opcli's) not yet fired or cleared. */
    get pending() {
      return manual.pending;
    },
  };
  const sandbox = await startSandbox(fakeClock ? { ...sandboxOptions, clock: manual } : sandboxOptions);
  const { dir, cleanup } = tempConfigDir();
  await sandboxProfile(sandbox, dir);
  const record = ledger === 'database' ? await teamRecord() : undefined;
  const env: Record<string, string> = { OPCLI_CONFIG_DIR: dir, ...record?.env(0) };
  const captured: string[] = [];
  const fx: Fixture = {
    record,
    sandbox,
    dir,
    env,
    captured,
    clock,
    async run(argv, opts = {}) {
      // opcli's deadlines are timers on the manual clock; its sleeps move the clock forward (firing
      // every timer that falls due on the way), so a wait passes at once in virtual time.
      const timers = fakeClock
        ? {
            timers: manual,
            sleep: async (ms: number) => {
              clock.advance(ms);
            },
          }
        : {};
      const result = await runOpcli(argv, { ...timers, ...opts, env: { ...env, ...opts.env } });
      captured.push(result.stdout, result.stderr);
      return result;
    },
    async unset(...keys) {
      for (const key of keys) {
        const r = await runOpcli(['config', 'unset', key], { env });
        if (r.code !== 0) throw new Error(`config unset ${key} failed: ${r.stderr}`);
      }
    },
    providerCalls() {
      return sandbox.requests
        .filter((r) => r.path.startsWith('/provider') || r.path.startsWith('/storefront'))
        .map((r) => `${r.method} ${r.path.replace(/^\/provider/, '')}`);
    },
    async close() {
      await sandbox.close();
      cleanup();
    },
  };
  started.push(fx);
  if (unset) await fx.unset(...unset);
  return fx;
}

/** Flags of a claim issuance for Alice (who has a loyalty card of 10.00). */
export function aliceClaim(claim = 'C-1', extra: string[] = [], amount = '25.00'): string[] {
  return [
    'giftcard',
    'issue',
    '--claim',
    claim,
    '--order',
    '1001',
    '--amount',
    amount,
    '--email',
    'alice@example.com',
    '--name',
    'Alice Example',
    '--customer-id',
    'cust_1001',
    '--yes',
    ...extra,
  ];
}
