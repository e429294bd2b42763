/** Shared setup of the giftcard tests: a sandbox, a temp config folder with its profile, and helpers. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { manualClock, startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/types.js';
import { type RunOptions, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

export interface Fixture {
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
      await fx.close();
    }
  });
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
export async function fixture(options: SandboxOptions & { fakeClock?: boolean; unset?: string[] } = {}): Promise<Fixture> {
  const { fakeClock, unset, ...sandboxOptions } = options;
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
  const env = { OPCLI_CONFIG_DIR: dir };
  const captured: string[] = [];
  const fx: Fixture = {
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
