/** `opcli sandbox`: start the built-in emulator, print how to reach it, run until interrupted. */
import type { Deps } from '../../core/deps.js';
import { assertReplaceableBySandbox, writeSandboxProfile } from '../../config/sandbox-profile.js';
import { startSandbox } from '../../sandbox/index.js';
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

/** Starts the sandbox, prints its URLs and credentials, and stops it when `deps.signal` aborts. */
export async function run(opts: SandboxCommandOptions, deps: Deps): Promise<void> {
  if (opts.writeProfile !== undefined && !opts.force) {
    assertReplaceableBySandbox(await deps.settings(), await deps.credentials(), opts.writeProfile);
  }
  const sandbox = await startSandbox({
    port: opts.port,
    orders: opts.orders,
    accessTokenTtl: opts.tokenTtl,
    autoApprove: opts.autoApprove,
    triggerDelayMs: opts.triggerDelay,
    rateLimit: opts.rateLimit,
    latencyMs: opts.latencyMs,
  });
  try {
    if (opts.writeProfile !== undefined) {
      await writeSandboxProfile(sandbox, await deps.settings(), await deps.credentials(), opts.writeProfile);
    }
    const info = {
      url: sandbox.url,
      authorizeUrl: sandbox.authorizeUrl,
      adminUrl: `${sandbox.url}/__admin`,
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
        `  curl -X POST ${sandbox.url}/__admin/session-tokens`,
        `Recorded requests: curl ${sandbox.url}/__admin/requests   counters: curl ${sandbox.url}/__admin/counters`,
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
