import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { parseDuration, parseRate, parseWholeNumber, completeValues } from '../../core/flags.js';
import { ProfileName } from '../../config/settings-schema.js';
import { run, type SandboxCommandOptions } from './run.js';

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

/** Registers `opcli sandbox`. */
export function register(program: Command, deps: Deps): void {
  program
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
  const sandbox = program.commands.find((c) => c.name() === 'sandbox');
  if (sandbox) completeValues(sandbox, { '--rate-limit-headers': HEADER_STYLES });
}
