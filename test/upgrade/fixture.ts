/**
 * The files opcli 0.2.0 left behind (test/fixtures/0.2.0, made by 0.2.0's own build with
 * test/fixtures/make-0.2.0.mjs), laid out as a user who upgrades has them: copied into a temporary
 * folder with the modes 0.2.0 gave them, 0.2.0's sandbox origin replaced by this test's sandbox's
 * (the same service, on another loopback port), and the credentials the fixtures leave out set
 * through today's CLI. The tests look only at what the built binary prints and what the sandbox
 * received: never at the record's code, so they hold whatever shape the record takes.
 */
import { chmodSync, cpSync, readFileSync, realpathSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { ROOT, runBinary, runOpcli, tempConfigDir } from '../helpers.js';

export const FIXTURE = join(ROOT, 'test', 'fixtures', '0.2.0');

/** One command 0.2.0 ran: a batch, a single claim, an issuance, or a setting. */
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

export const manifest: Manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8'));

/** A config folder and a batch folder as 0.2.0 left them, pointing at `sandbox`. */
export interface Upgraded {
  config: string;
  batches: string;
  /** The environment of a run with this config folder. */
  env: Record<string, string>;
  /** The client secret and the provider token set for the run: never in its output. */
  secrets: string[];
}

/** Files 0.2.0 wrote that name its sandbox's origin (paths as the manifest gives them): the profile's URLs and each journal's header. */
function namesTheOrigin(path: string): boolean {
  return path === 'config/settings.json' || path.endsWith('.journal.jsonl');
}

/** Copies the fixtures into `root` as 0.2.0 left them, its origin replaced by `origin`. */
function layOut(root: string, origin: string): void {
  for (const part of ['config', 'batches']) cpSync(join(FIXTURE, part), join(root, part), { recursive: true });
  const made = new Date(manifest.made);
  for (const [path, mode] of Object.entries(manifest.modes)) {
    const file = join(root, ...path.split('/'));
    if (namesTheOrigin(path)) writeFileSync(file, readFileSync(file, 'utf8').replaceAll(manifest.origin, origin));
    chmodSync(file, Number.parseInt(mode, 8));
    // Untouched since 0.2.0 ran: the lock its killed batch left is as old as the kill.
    utimesSync(file, made, made);
  }
}

/**
 * One sandbox for the file, and per test a fresh copy of 0.2.0's folders, logged in (client
 * credentials) with the provider token set, and the sandbox's request log emptied after that.
 */
export function upgradeSuite(bind: (s: { sandbox: Sandbox; up: Upgraded }) => void): void {
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
    layOut(root, new URL(sandbox.url).origin);
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

/** The commands of one kind 0.2.0 ran to make the fixtures, in order. */
export function stepsOf(kind: Step['kind']): Step[] {
  return manifest.steps.filter((s) => s.kind === kind);
}

/** The batch file a `claims file --from` command line names. */
export function fromFile(argv: string[]): string {
  return argv[argv.indexOf('--from') + 1] as string;
}

/**
 * What 0.2.0's journal of `file` says of each row, by line: its last status and sourceOrderId (the
 * journal's documented lines, docs/guides/batch-claims.md; a torn last line skipped).
 */
export function journalOf(file: string): Map<number, { status: string; sourceOrderId?: string }> {
  const out = new Map<number, { status: string; sourceOrderId?: string }>();
  for (const text of readFileSync(join(FIXTURE, 'batches', `${file}.journal.jsonl`), 'utf8').split('\n')) {
    try {
      const e = JSON.parse(text);
      if (typeof e.line === 'number') out.set(e.line, { status: e.status, sourceOrderId: e.sourceOrderId });
    } catch {}
  }
  return out;
}

/** The claim the 0.2.0 sandbox held with this sourceOrderId (its item.details names the file and row). */
export function serverClaim(sourceOrderId: string | undefined): string | undefined {
  return manifest.server.claims.find((c) => c.sourceOrderId === sourceOrderId)?.details;
}

/** Parses --jsonl output: each row's result, without the summary line. */
export function rowResults(stdout: string): { line: number; status: string; sourceOrderId?: string; error?: string; earlier?: boolean }[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => !('summary' in r));
}
