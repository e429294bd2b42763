import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createDeps, type Deps } from '../../cli/deps.js';
import { OpcliError } from '../../core/errors.js';
import { colors, terminalWidth } from '../../core/output.js';
import { wrapText } from '../../text/wrap.js';
import { steps as authSteps, finalSteps as authFinalSteps } from './steps-auth.js';
import { steps as claimsSteps } from './steps-claims.js';
import { steps as giftcardSteps } from './steps-giftcard.js';
import { steps as ordersSteps } from './steps-orders.js';
import type { RunCli, StartSandbox, TourCommand, TourContext, TourStep } from './tour.js';
import { followRedirects, tee } from './tour-io.js';
import { shellQuote } from '../../text/shell-quote.js';
import { CredentialStore } from '../../config/credentials.js';
import { writeSandboxProfile } from '../../config/sandbox-profile.js';
import { SettingsStore } from '../../config/settings.js';
import { startSandbox } from '../../sandbox/index.js';

const foundationSteps: TourStep[] = [
  {
    title: 'A profile pointing at the sandbox',
    async run(ctx) {
      ctx.say('`opcli sandbox --write-profile` wrote these settings; secrets are masked.');
      await ctx.run(['config', 'list']);
      await ctx.run(['profiles', 'list']);
    },
  },
];

/**
 * Runs every tour step against an in-process sandbox with a temporary config folder; returns the
 * commands it ran, each with its exit code. A command that ends otherwise than its step expects
 * stops the tour with an error.
 */
export async function runTour(opts: { keep: boolean; runCli: RunCli; startSandbox?: StartSandbox }, deps: Deps): Promise<TourCommand[]> {
  const chalk = await colors(deps, 'stderr');
  const sandbox = await (opts.startSandbox ?? startSandbox)({ autoApprove: true, orders: 1200, triggerDelayMs: 800 });
  const commands: TourCommand[] = [];
  let step = '';
  const configDir = mkdtempSync(join(tmpdir(), 'opcli-demo-'));
  const env = { ...deps.env, OPCLI_CONFIG_DIR: configDir, OPCLI_PROFILE: undefined, OPCLI_TOKEN: undefined, OPCLI_BASE_URL: undefined };
  // Narration and the echoed commands fit the terminal, broken at word boundaries.
  const width = terminalWidth(deps, 'stderr');
  const say = (text: string) => deps.err(`${chalk.cyan('#')} ${wrapText(text, width - 2).replace(/\n/g, '\n  ')}\n`);
  const ctx: TourContext = {
    sandbox,
    deps,
    configDir,
    say,
    async run(argv, options = {}) {
      const line = wrapText(['opcli', ...argv.map(shellQuote)].join(' '), width - 6).split('\n');
      deps.err(`\n${chalk.bold.green('$')} ${line.map((l) => chalk.bold(l)).join(' \\\n    ')}\n`);
      let stdout = '';
      let stderr = '';
      const seen = sandbox.requests.at(-1)?.seq ?? 0;
      const child = createDeps({
        stdin: Readable.from(options.stdin !== undefined ? [Buffer.from(options.stdin)] : []),
        stdout: tee(
          deps.io.stdout,
          (t) => {
            stdout += t;
          },
          deps.io.stdoutIsTTY ? terminalWidth(deps, 'stdout') : undefined,
        ),
        stderr: tee(
          deps.io.stderr,
          (t) => {
            stderr += t;
          },
          deps.io.stderrIsTTY ? width : undefined,
        ),
        stdoutIsTTY: deps.io.stdoutIsTTY,
        stderrIsTTY: deps.io.stderrIsTTY,
        env: { ...env, CI: '1', COLUMNS: String(width) },
        cwd: configDir,
        signal: deps.signal,
        // The tour plays the merchant's browser: it follows the authorization URL, and the
        // sandbox's auto-approve redirects it to opcli's loopback callback.
        openBrowser: async (url) => {
          say(`(the tour opens ${url.split('?')[0]} as a browser would)`);
          await followRedirects(url);
        },
      });
      const code = await opts.runCli(argv, child);
      const expected = options.expectCode ?? 0;
      commands.push({ step, argv, expected, code, stdout, stderr, received: sandbox.requests.filter((r) => r.seq > seen) });
      if (code !== expected) throw new OpcliError(`Tour step failed: \`opcli ${argv.map(shellQuote).join(' ')}\` exited ${code}, expected ${expected}.`);
      return { code, stdout, stderr };
    },
  };
  try {
    say(`Sandbox running at ${sandbox.url} (the API and a gift card provider, on loopback only).`);
    say(`Temporary config folder: ${configDir}`);
    await writeSandboxProfile(sandbox, await SettingsStore.open(configDir), await CredentialStore.open(configDir), 'default');
    const all = [...foundationSteps, ...authSteps, ...ordersSteps, ...claimsSteps, ...giftcardSteps, ...authFinalSteps];
    for (const [i, { title, run }] of all.entries()) {
      step = title;
      deps.err(`\n${chalk.bold.underline(`Step ${i + 1} of ${all.length}: ${title}`)}\n`);
      await run(ctx);
    }
    deps.err(`\n${chalk.bold('The tour is over.')}\nStart your own sandbox with \`opcli sandbox --write-profile default\`.\n`);
    return commands;
  } finally {
    await sandbox.close();
    if (opts.keep) deps.err(`Config folder kept: ${configDir}\n`);
    else rmSync(configDir, { recursive: true, force: true });
  }
}
