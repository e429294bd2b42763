/** `opcli sandbox`: start the built-in emulator, print how to reach it, run until interrupted. */
import { once } from 'node:events';
import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { parseDuration, parseRate, parseWholeNumber, completeValues } from '../../core/flags.js';
import { ProfileName } from '../../config/settings-schema.js';
import { assertReplaceableBySandbox, writeSandboxProfile } from '../../config/sandbox-profile.js';
import { markSandboxStarting } from '../../config/sandbox-starting.js';
import { type Sandbox, startSandbox } from '../../sandbox/index.js';
import type { RateLimit } from '../../sandbox/rate-limit.js';

/** The styles of --rate-limit-headers. */
const HEADER_STYLES = ['none', 'ietf', 'x', 'both'];

/** The flags of `opcli sandbox` as commander gives them. */
interface SandboxFlags {
  port: string;
  orders: string;
  tokenTtl: string;
  autoApprove?: boolean;
  triggerDelay: string;
  rateLimit?: string;
  rateLimitBurst?: string;
  rateLimitHeaders: string;
  retryAfter: boolean;
  latency: string;
  writeProfile?: string;
  force?: boolean;
  json?: boolean;
}

/** Checks the flags and turns them into the sandbox's options. */
function parseFlags(flags: SandboxFlags): SandboxCommandOptions {
  const headers = flags.rateLimitHeaders;
  if (!HEADER_STYLES.includes(headers)) {
    throw new UsageError(`--rate-limit-headers "${headers}" is not a style.`, 'Expected none, ietf, x or both.');
  }
  const profile = flags.writeProfile === undefined ? undefined : ProfileName.safeParse(flags.writeProfile);
  if (profile && !profile.success) {
    throw new UsageError(`--write-profile: ${profile.error.issues[0]?.message ?? 'invalid name'}, got "${flags.writeProfile}".`);
  }
  if (flags.rateLimit === undefined && flags.rateLimitBurst !== undefined)
    throw new UsageError('--rate-limit-burst goes with --rate-limit.', 'Add --rate-limit, e.g. --rate-limit 40/s.');
  return {
    port: parseWholeNumber(flags.port, '--port', { max: 65535 }),
    orders: parseWholeNumber(flags.orders, '--orders', { max: 10_000_000 }),
    tokenTtl: parseDuration(flags.tokenTtl, '--token-ttl', { minMs: 1000 }) / 1000,
    autoApprove: !!flags.autoApprove,
    triggerDelay: flags.triggerDelay === 'never' ? null : parseDuration(flags.triggerDelay, '--trigger-delay', { maxMs: 3_600_000 }),
    rateLimit:
      flags.rateLimit === undefined
        ? undefined
        : {
            perSecond: parseRate(flags.rateLimit, '--rate-limit'),
            burst: flags.rateLimitBurst === undefined ? undefined : parseWholeNumber(flags.rateLimitBurst, '--rate-limit-burst', { min: 1 }),
            retryAfter: flags.retryAfter,
            headers: headers as 'none' | 'ietf' | 'x' | 'both',
          },
    latencyMs: parseDuration(flags.latency, '--latency', { maxMs: 60_000 }),
    writeProfile: profile?.data,
    force: !!flags.force,
    json: !!flags.json,
  };
}

export function register(program: Command, deps: Deps): void {
  const sandbox = program
    .command('sandbox')
    .description('Run a local emulator of the API and the gift card provider')
    .option('--port <n>', 'port to listen on, on 127.0.0.1 (0 picks a free one)', '0')
    .option('--orders <n>', 'how many orders the seeded store has', '250')
    .option('--token-ttl <duration>', 'access token lifetime, e.g. 90s or 1h', '1h')
    .option('--auto-approve', 'the consent page approves at once (no browser click needed)')
    .option('--trigger-delay <duration|never>', 'delay before a trigger workflow posts its credit (e.g. 1s, 300ms), or "never"', '1s')
    .option('--rate-limit <rate>', 'answer 429 beyond this many requests per access token, e.g. 40/s (a token bucket)')
    .option('--rate-limit-burst <n>', 'requests a bucket holds after a quiet spell (default: one second of the rate)')
    .option('--rate-limit-headers <style>', 'announce the budget: none, ietf (RateLimit-*), x (X-RateLimit-*) or both', 'none')
    .option('--no-retry-after', 'answer 429 without a Retry-After header')
    .option('--latency <duration>', 'delay every API answer, e.g. 50ms', '0ms')
    .option('--write-profile <name>', 'write a ready profile (URLs, client, store, provider) for this sandbox')
    .option('--force', 'with --write-profile: replace a profile even if it points at a real service')
    .option('--json', 'print the URLs and credentials as one JSON object')
    .addHelpText(
      'after',
      `
Runs until Ctrl-C. URLs and credentials go to stdout; notes go to stderr. Only this machine's
loopback names are served (Host), and no request from another origin (a web page).
The admin API is under <url>/__admin: requests, counters, faults, session-tokens, configure,
reset-log. It takes the adminSecret printed (a new one each run) as a bearer token, and JSON only;
--write-profile stores it (\`opcli config get sandbox-admin-secret --reveal\`). A command that reads
the profile while the sandbox is still starting waits for it to be written.

Examples:
  $ opcli sandbox --write-profile local          # then: opcli --profile local auth login
  $ opcli sandbox --port 8787 --auto-approve
  $ opcli sandbox --orders 100000 --trigger-delay never --json
  $ opcli sandbox --rate-limit 40/s --latency 50ms --no-retry-after
  $ curl -X POST -H "authorization: Bearer $SECRET" -H 'content-type: application/json' http://127.0.0.1:8787/__admin/session-tokens`,
    )
    .action(async (flags: SandboxFlags) => run(parseFlags(flags), deps));
  completeValues(sandbox, { '--rate-limit-headers': HEADER_STYLES });
}

/** What `opcli sandbox` was asked for, its flags checked. */
interface SandboxCommandOptions {
  port: number;
  orders?: number;
  tokenTtl?: number;
  autoApprove: boolean;
  /** Milliseconds, or null for never. */
  triggerDelay?: number | null;
  writeProfile?: string;
  /** Overwrite a --write-profile profile that points at a real service. */
  force?: boolean;
  json: boolean;
  rateLimit?: RateLimit;
  latencyMs?: number;
}

/** Starts the sandbox and writes the --write-profile profile before anything is printed (a reader meanwhile waits: config/sandbox-starting.ts). */
async function start(opts: SandboxCommandOptions, deps: Deps): Promise<Sandbox> {
  const profile = opts.writeProfile;
  const unmark = profile === undefined ? undefined : markSandboxStarting(deps.configDir(), profile, deps.now());
  try {
    if (profile !== undefined && !opts.force) assertReplaceableBySandbox(await deps.settings(), await deps.credentials(), profile);
    const sandbox = await startSandbox({
      port: opts.port,
      orders: opts.orders,
      accessTokenTtl: opts.tokenTtl,
      autoApprove: opts.autoApprove,
      triggerDelayMs: opts.triggerDelay,
      rateLimit: opts.rateLimit,
      latencyMs: opts.latencyMs,
    });
    if (profile === undefined) return sandbox;
    try {
      await writeSandboxProfile(sandbox, await deps.settings(), await deps.credentials(), profile);
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    return sandbox;
  } finally {
    unmark?.();
  }
}

/** Starts the sandbox, prints its URLs and credentials, and stops it when `deps.signal` aborts. */
async function run(opts: SandboxCommandOptions, deps: Deps): Promise<void> {
  const sandbox = await start(opts, deps);
  try {
    const info = {
      url: sandbox.url,
      authorizeUrl: sandbox.authorizeUrl,
      adminUrl: `${sandbox.url}/__admin`,
      adminSecret: sandbox.adminSecret,
      clientId: sandbox.client.clientId,
      clientSecret: sandbox.client.clientSecret,
      redirectUri: sandbox.client.redirectUri,
      storeId: sandbox.store.storeId,
      otherStoreId: sandbox.otherStoreId,
      scopes: sandbox.store.scopes,
      providerName: sandbox.providerName,
      providerUrl: sandbox.providerUrl,
      providerTokenHeader: `x-${sandbox.providerName}-access-token`,
      providerToken: sandbox.store.providerToken,
      shopUrl: sandbox.store.shopUrl,
      triggerId: sandbox.store.triggerId,
      triggerUrl: sandbox.triggerUrl,
      nativeUrl: sandbox.nativeUrl,
      customers: sandbox.customers.map((c) => c.customerId),
      sessionToken: sandbox.mintSessionToken(),
      ...(opts.writeProfile !== undefined ? { profile: opts.writeProfile } : {}),
    };
    if (opts.json) {
      deps.out(`${JSON.stringify(info)}\n`);
    } else {
      const rows: [string, string][] = Object.entries(info).map(([k, v]) => [k, Array.isArray(v) ? v.join(' ') : String(v)]);
      const width = Math.max(...rows.map(([k]) => k.length));
      deps.out(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n');
    }
    deps.err(
      [
        `Sandbox listening on ${sandbox.url} (${opts.orders ?? 250} orders). Press Ctrl-C to stop.`,
        'The session token above is valid 60 s, single use. Mint another with:',
        `  curl -X POST -H 'authorization: Bearer ${sandbox.adminSecret}' -H 'content-type: application/json' ${sandbox.url}/__admin/session-tokens`,
        `The admin API (${sandbox.url}/__admin: requests, counters, faults …) takes that adminSecret as a bearer token${opts.writeProfile !== undefined ? `; \`opcli --profile ${opts.writeProfile} config get sandbox-admin-secret --reveal\` prints it` : ''}.`,
        opts.writeProfile !== undefined
          ? `Profile "${opts.writeProfile}" now points here; log in with: opcli --profile ${opts.writeProfile} auth login`
          : 'Tip: --write-profile NAME writes a ready profile for this sandbox.',
        '',
      ].join('\n'),
    );
    if (!deps.signal.aborted) await once(deps.signal, 'abort');
  } finally {
    await sandbox.close();
  }
  deps.err('Sandbox stopped.\n');
}
