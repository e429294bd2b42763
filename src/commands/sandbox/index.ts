import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { UsageError } from '../../errors.js';

/** Registers `opcli sandbox`; the emulator itself loads only when the command runs. */
export function register(program: Command, deps: Deps): void {
  program
    .command('sandbox')
    .description('Run a local emulator of the API and the gift card provider')
    .option('--port <n>', 'port to listen on, on 127.0.0.1 (0 picks a free one)', '0')
    .option('--orders <n>', 'how many orders the seeded store has', '250')
    .option('--token-ttl <seconds>', 'access token lifetime in seconds', '3600')
    .option('--auto-approve', 'the consent page approves at once (no browser click needed)')
    .option('--trigger-delay <ms|never>', 'delay before a trigger workflow posts its credit, or "never"', '1000')
    .option('--write-profile <name>', 'write a ready profile (URLs, client, store, provider) for this sandbox')
    .option('--json', 'print the URLs and credentials as one JSON object')
    .addHelpText(
      'after',
      `
Runs until Ctrl-C. URLs and credentials go to stdout; notes go to stderr.
The admin API is under <url>/__admin: requests, counters, faults, session-tokens, configure, reset-log.

Examples:
  $ opcli sandbox --write-profile local          # then: opcli --profile local auth login
  $ opcli sandbox --port 8787 --auto-approve
  $ opcli sandbox --orders 100000 --trigger-delay never --json
  $ curl -X POST http://127.0.0.1:8787/__admin/session-tokens`,
    )
    .action(
      async (flags: {
        port: string;
        orders: string;
        tokenTtl: string;
        autoApprove?: boolean;
        triggerDelay: string;
        writeProfile?: string;
        json?: boolean;
      }) => {
        const [{ run }, { ProfileName }] = await Promise.all([import('./run.js'), import('../../config/settings.js')]);
        const profile = flags.writeProfile === undefined ? undefined : ProfileName.safeParse(flags.writeProfile);
        if (profile && !profile.success) {
          throw new UsageError(`--write-profile: ${profile.error.issues[0]?.message ?? 'invalid name'}, got "${flags.writeProfile}".`);
        }
        await run(
          {
            port: integer('--port', flags.port, 0, 65535),
            orders: integer('--orders', flags.orders, 0, 10_000_000),
            tokenTtl: positive('--token-ttl', flags.tokenTtl),
            autoApprove: !!flags.autoApprove,
            triggerDelay: flags.triggerDelay === 'never' ? null : integer('--trigger-delay', flags.triggerDelay, 0, 3_600_000),
            writeProfile: profile?.data,
            json: !!flags.json,
          },
          deps,
        );
      },
    );
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got "${raw}".`);
  return n;
}

function positive(flag: string, raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a number of seconds above 0, got "${raw}".`);
  return n;
}
