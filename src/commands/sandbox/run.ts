/** `opcli sandbox`: start the built-in emulator, print how to reach it, run until interrupted. */
import type { Deps } from '../../cli/deps.js';
import { assertReplaceableBySandbox, writeSandboxProfile } from '../../config/sandbox-profile.js';
import { markSandboxStarting } from '../../config/sandbox-starting.js';
import { type Sandbox, startSandbox } from '../../sandbox/index.js';
import type { RateLimit } from '../../sandbox/rate-limit.js';

export interface SandboxCommandOptions {
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

/**
 * Starts the sandbox and, with --write-profile, writes the profile before anything is printed. A
 * command reading that profile meanwhile waits for it: the marker is left first
 * (src/config/sandbox-starting.ts) and removed once the profile is written, or the start failed.
 */
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
export async function run(opts: SandboxCommandOptions, deps: Deps): Promise<void> {
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
    await untilAborted(deps.signal);
  } finally {
    await sandbox.close();
  }
  deps.err('Sandbox stopped.\n');
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
