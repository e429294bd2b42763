/**
 * The files an earlier opcli left behind (test/fixtures/<set>, made by that version's own build with
 * test/fixtures/make-upgrade-fixtures.mjs), laid out as a user who upgrades has them: copied into a
 * temporary folder with the modes it gave them, its sandbox's origin replaced by this test's
 * sandbox's (the same service, on another loopback port), and the credentials the fixtures leave out
 * set through today's CLI. The tests look only at what the built binary prints and what the sandbox
 * received: never at the record's code, so they hold whatever shape the record takes.
 */
import { chmodSync, cpSync, readFileSync, realpathSync, utimesSync, writeFileSync } from 'node:fs';
import { uptime } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { ROOT, runBinary, runOpcli, tempConfigDir } from '../helpers.js';

/** One command the old version ran: a batch, a single claim, an issuance, or a setting. */
export interface Step {
  kind: 'setup' | 'batch' | 'single' | 'issue';
  name: string;
  what: string;
  argv: string[];
  /** The requests it sent, by method and path. */
  sent: Record<string, number>;
}

interface Manifest {
  made: string;
  origin: string;
  modes: Record<string, string>;
  steps: Step[];
  server: { claims: { sourceOrderId: string; details: string }[] };
}

/**
 * A set of old files: `0.2.0` (the release: journals of format version 3, the gift card ledger) or
 * `journal-v2` (the last build that wrote journals of format version 2, unreleased), and what its
 * manifest says of them.
 */
export function oldFiles(name: '0.2.0' | 'journal-v2') {
  const dir = join(ROOT, 'test', 'fixtures', name);
  const manifest: Manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  return {
    name,
    dir,
    manifest,
    /** The commands of one kind the old version ran to make the files, in order. */
    stepsOf: (kind: Step['kind']): Step[] => manifest.steps.filter((s) => s.kind === kind),
    /**
     * What the old journal of `file` says of each row, by line: its last status and sourceOrderId
     * (the journal's documented lines, docs/guides/batch-claims.md; a torn last line skipped).
     */
    journalOf(file: string): Map<number, { status: string; sourceOrderId?: string }> {
      const out = new Map<number, { status: string; sourceOrderId?: string }>();
      for (const text of readFileSync(join(dir, 'batches', `${file}.journal.jsonl`), 'utf8').split('\n')) {
        try {
          const e = JSON.parse(text);
          if (typeof e.line === 'number') out.set(e.line, { status: e.status, sourceOrderId: e.sourceOrderId });
        } catch {}
      }
      return out;
    },
    /**
     * What the old gift card ledger says of the issuance `argv` ran (its claim, or its order for a
     * bonus): the outcome's status and path, or `attempt` and null when it has none.
     */
    outcomeOf(argv: string[]): { status: string; path: string | null } {
      const lines = readFileSync(join(dir, 'config', 'giftcard-ledger.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean);
      const records = lines.map((l) => JSON.parse(l));
      const claim = flagOf(argv, '--claim');
      const attempt = records.find((r) => r.type === 'attempt' && (claim ? r.claimId === claim : r.bonus && r.orderNumber === flagOf(argv, '--order')));
      const outcome = records.findLast((r) => r.type === 'outcome' && r.issuance === attempt?.issuance);
      return outcome ? { status: outcome.status, path: outcome.path ?? null } : { status: 'attempt', path: null };
    },
    /** The claim the old sandbox held with this sourceOrderId (its item.details names the file and row). */
    serverClaim: (sourceOrderId: string | undefined): string | undefined => manifest.server.claims.find((c) => c.sourceOrderId === sourceOrderId)?.details,
  };
}

export type OldFiles = ReturnType<typeof oldFiles>;

/** A config folder and a batch folder as the old version left them, pointing at `sandbox`. */
export interface Upgraded {
  config: string;
  batches: string;
  /** The environment of a run with this config folder. */
  env: Record<string, string>;
  /** The client secret and the provider token set for the run: never in its output. */
  secrets: string[];
}

/** Old files that name the old sandbox's origin (paths as the manifest gives them): the profile's URLs and each journal's header. */
function namesTheOrigin(path: string): boolean {
  return path === 'config/settings.json' || path.endsWith('.journal.jsonl');
}

/** Copies the old files into `root` as they were left, their origin replaced by `origin`. */
function layOut(old: OldFiles, root: string, origin: string): void {
  const { manifest } = old;
  for (const part of ['config', 'batches']) cpSync(join(old.dir, part), join(root, part), { recursive: true });
  const made = new Date(manifest.made);
  // The lock a killed run left names a pid and a host (the machine that made the set, which may be
  // this one). It dates from before this machine started, as after a reboot or on another computer:
  // no process running now can be its owner, whatever its pid, so the rerun's outcome does not depend
  // on which processes happen to run here.
  const beforeBoot = new Date(Math.min(made.getTime(), Date.now() - uptime() * 1000 - 3_600_000));
  for (const [path, mode] of Object.entries(manifest.modes)) {
    const file = join(root, ...path.split('/'));
    if (namesTheOrigin(path)) writeFileSync(file, readFileSync(file, 'utf8').replaceAll(manifest.origin, origin));
    chmodSync(file, Number.parseInt(mode, 8));
    const time = path.includes('.lock') ? beforeBoot : made;
    utimesSync(file, time, time);
  }
}

/**
 * One sandbox for the file (or describe block), and per test a fresh copy of the old folders, logged
 * in (client credentials) with the provider token set, and the sandbox's request log emptied after that.
 */
export function upgradeSuite(old: OldFiles, bind: (s: { sandbox: Sandbox; up: Upgraded }) => void): void {
  let sandbox: Sandbox;
  let cleanup = () => {};
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox.close();
  });
  beforeEach(async () => {
    const temp = tempConfigDir();
    cleanup = temp.cleanup;
    // Its real path: opcli names files by theirs (macOS's temporary folder is behind a link).
    const root = realpathSync(temp.dir);
    layOut(old, root, new URL(sandbox.url).origin);
    const up = {
      config: join(root, 'config'),
      batches: join(root, 'batches'),
      env: { OPCLI_CONFIG_DIR: join(root, 'config') },
      secrets: [sandbox.client.clientSecret, sandbox.store.providerToken],
    };
    for (const [key, value] of [
      ['client-secret', sandbox.client.clientSecret],
      ['provider-token', sandbox.store.providerToken],
    ]) {
      const set = await runOpcli(['config', 'set', key as string, '--stdin'], { env: up.env, stdin: value });
      if (set.code !== 0) throw new Error(`config set ${key}: ${set.stderr}`);
    }
    const login = await runOpcli(['auth', 'login', '--client-credentials'], { env: up.env });
    if (login.code !== 0) throw new Error(`auth login: ${login.stderr}`);
    sandbox.resetLog();
    sandbox.setFaults([]);
    bind({ sandbox, up });
  });
  afterEach(() => cleanup());
}

/** Runs today's built binary in the batch folder; fails the test when its output holds a secret. */
export async function opcli(up: Upgraded, argv: string[]) {
  const res = await runBinary(argv, { env: up.env, cwd: up.batches });
  for (const secret of up.secrets) expect(`${res.stdout}${res.stderr}`.includes(secret), 'a secret in the output').toBe(false);
  return res;
}

/** The requests that can file a claim or move money: every one the sandbox received but reads (GET) and logins. */
export function actions(sandbox: Sandbox): string[] {
  return sandbox.requests.filter((r) => r.method !== 'GET' && r.path !== '/v1/oauth/token').map((r) => `${r.method} ${r.path}`);
}

/** The CSV or JSONL batch `name` copied to `copy` with its rows in reverse order (a CSV keeps its header first). */
export function reversedCopy(up: Upgraded, name: string, copy: string): string {
  const lines = readFileSync(join(up.batches, name), 'utf8').trimEnd().split('\n');
  const [header, ...rows] = name.endsWith('.csv') ? lines : [undefined, ...lines];
  const out = [...(header === undefined ? [] : [header]), ...rows.reverse()];
  writeFileSync(join(up.batches, copy), `${out.join('\n')}\n`);
  return copy;
}

/** The value of `flag` in a command line, or undefined. */
export function flagOf(argv: string[], flag: string): string | undefined {
  return argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined;
}

/** The batch file a `claims file --from` command line names. */
export function fromFile(argv: string[]): string {
  return flagOf(argv, '--from') as string;
}
