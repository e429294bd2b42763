import type { Command } from 'commander';
import { type Deps, createDeps } from '../../cli/deps.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { OpcliError } from '../../core/errors.js';
import { colors, terminalWidth } from '../../core/output.js';
import { wrapText, displayWidth } from '../../text/wrap.js';
import { shellQuote } from '../../text/safe.js';
import { CredentialStore } from '../../config/credentials.js';
import { writeSandboxProfile } from '../../config/sandbox-profile.js';
import { SettingsStore } from '../../config/settings.js';
import { startSandbox } from '../../sandbox/index.js';
import type { ReceivedRequest, Sandbox, SandboxOptions } from '../../sandbox/types.js';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';

/** `opcli demo`, given the `runCli` (cli/program.ts) each step of the tour runs a command through. */
export function group(runCli: RunCli): { register(program: Command, deps: Deps): void } {
  return {
    register: (program, deps) =>
      program
        .command('demo')
        .description('A guided tour: starts a sandbox, uses a temporary config folder, and runs each command end to end')
        .option('--keep', 'keep the temporary config folder and print its path')
        .addHelpText('after', '\nExamples:\n  $ npm start            # the same as: opcli demo\n  $ opcli demo --keep')
        .action(async (flags: { keep?: boolean }) => {
          await runTour({ keep: !!flags.keep, runCli }, deps);
        }),
  };
}

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

/** Runs every tour step against an in-process sandbox and a temporary config folder; an unexpected exit code stops the tour. */
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
      const out = tee(deps.io.stdout, deps.io.stdoutIsTTY ? terminalWidth(deps, 'stdout') : undefined);
      const err = tee(deps.io.stderr, deps.io.stderrIsTTY ? width : undefined);
      const seen = sandbox.requests.at(-1)?.seq ?? 0;
      const child = createDeps({
        stdin: Readable.from(options.stdin !== undefined ? [Buffer.from(options.stdin)] : []),
        stdout: out,
        stderr: err,
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
      const { kept: stdout } = out;
      const { kept: stderr } = err;
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

/** cli/program.ts's runCli, given to the demo when its group loads. */
export type RunCli = (argv: string[], deps: Deps) => Promise<number>;

/** What a tour step gets: the sandbox, a way to run opcli commands visibly, and the tour's deps. */
export interface TourContext {
  sandbox: Sandbox;
  deps: Deps;
  /** The temporary config folder the tour uses. */
  configDir: string;
  /** Prints `$ opcli <argv>` and runs it in-process against the sandbox; returns its captured output. */
  run(argv: string[], options?: { stdin?: string; expectCode?: number }): Promise<{ code: number; stdout: string; stderr: string }>;
  /** A line of narration on stderr. */
  say(text: string): void;
}

/** One step of the guided tour. */
export interface TourStep {
  title: string;
  run(ctx: TourContext): Promise<void>;
}

/** Starts the tour's sandbox: the sandbox's own `startSandbox`, or a test's, which keeps it to read what it received. */
export type StartSandbox = (options: SandboxOptions) => Promise<Sandbox>;

/** One command the tour ran: its step, expected and actual exit codes, its output and the requests the sandbox received. */
export interface TourCommand {
  step: string;
  argv: string[];
  expected: number;
  code: number;
  stdout: string;
  stderr: string;
  received: ReceivedRequest[];
}

/** Tees a stream: everything written is kept and passed on; on a terminal (`width` given) a wider line is broken to fit, a pipe gets it exact. */
function tee(target: Writable, width: number | undefined): Writable & { kept: string } {
  const stream = new Writable({
    write(chunk, _enc, done) {
      const text = chunk.toString();
      teed.kept += text;
      // Passed on at once: the tour's narration goes straight to the same stream and must not overtake a step's last lines.
      target.write(width === undefined ? text : fitLines(text, width));
      done();
    },
  });
  const teed = Object.assign(stream, { kept: '', columns: (target as { columns?: number }).columns });
  return teed;
}

/** GETs a URL and follows redirects by hand (to loopback only), as a browser would. */
export async function followRedirects(start: string): Promise<void> {
  const { request } = await import('../../http/undici.js');
  let url = start;
  for (let hop = 0; hop < 5; hop++) {
    const res = await request(url, { method: 'GET' });
    await res.body.text();
    const location = res.headers.location;
    if (res.statusCode < 300 || res.statusCode >= 400 || typeof location !== 'string') return;
    url = new URL(location, url).toString();
  }
}

/** Breaks lines wider than `width`, but progress lines (\r) and tab-separated data: the terminal folds them without a break in what is copied. */
function fitLines(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => (line.includes('\r') || line.includes('\t') || displayWidth(line) <= width ? line : packLine(line, width)))
    .join('\n');
}

/** A long line broken after a comma or a space where it can (a CSV header, a JSON line), mid-word only for a word wider than the screen. */
function packLine(line: string, width: number): string {
  const lines: string[] = [];
  let current = '';
  for (const piece of line.split(/(?<=[, ])/)) {
    if (current !== '' && displayWidth(current + piece) > width) {
      lines.push(current.trimEnd());
      current = '';
    }
    current += piece;
    if (displayWidth(current) > width) {
      const parts = wrapText(current, width, { hard: true }).split('\n');
      current = parts.pop() ?? '';
      lines.push(...parts);
    }
  }
  if (current !== '') lines.push(current);
  return lines.join('\n');
}

/** Tour steps of the auth commands: a real PKCE login against the sandbox, then the login's status. */
export const authSteps: TourStep[] = [
  {
    title: 'Log in through the browser (authorization code + PKCE)',
    async run(ctx) {
      ctx.say('opcli listens on a free port of 127.0.0.1, prints the consent link and opens it.');
      ctx.say('The tour plays the browser; the sandbox approves at once and redirects to the loopback port.');
      await ctx.run(['auth', 'login']);
    },
  },
  {
    title: 'What is stored: grant, store, scopes, expiry; never a secret',
    async run(ctx) {
      await ctx.run(['auth', 'status']);
      ctx.say('Tokens are refreshed on their own 5 minutes before they expire; `auth refresh` forces it (the refresh token rotates).');
      await ctx.run(['auth', 'refresh']);
    },
  },
];

/** The last steps of the tour (run after every other group): log out, revoking both tokens. */
export const authFinalSteps: TourStep[] = [
  {
    title: 'Log out: revoke the refresh and access tokens, delete them here',
    async run(ctx) {
      await ctx.run(['auth', 'logout']);
      ctx.say('From here every command that needs the API exits 4 (log in needed) until the next `opcli auth login`.');
    },
  },
];

/** Tour steps of the orders, variants, session and api commands (run after login). */
const ordersSteps: TourStep[] = [
  {
    title: 'List orders: one page, then across pages up to a --limit',
    async run(ctx) {
      ctx.say('One page: a table on a terminal, tab-separated lines in a pipe; the footer shows the next command.');
      await ctx.run(['orders', 'list', '--size', '5']);
      ctx.say(
        '--all follows the cursors, showing its progress (a line on a terminal, a sentence every 10 s in a log); --limit stops after N orders (here 3, 2 a page). --jsonl and --csv stream every field.',
      );
      await ctx.run(['orders', 'list', '--limit', '3', '--size', '2', '--columns', 'sourceOrderId,currency,total,customerEmail']);
    },
  },
  {
    title: 'Update an order: validated, and every field not given is kept',
    async run(ctx) {
      ctx.say('A currency outside the spec list is refused with the closest codes; nothing is sent.');
      await ctx.run(['orders', 'update', 'ord_000001', '--currency', 'USX'], { expectCode: 2 });
      ctx.say('The API replaces the whole order, so opcli reads the current record, changes the fields given and sends it whole. --dry-run shows the diff.');
      await ctx.run(['orders', 'update', 'ord_000001', '--total', '42.50', '--dry-run']);
      await ctx.run(['orders', 'update', 'ord_000001', '--total', '42.50', '--policy-cancelled-at', 'null']);
      await ctx.run(['api', 'GET', '/v1/orders', '--query', 'size=1']);
    },
  },
  {
    title: 'Create a product variant',
    async run(ctx) {
      await ctx.run([
        'variants',
        'create',
        'prod_mug',
        '--status',
        'ACTIVE',
        '--name',
        'Mug, blue',
        '--price',
        '12.50',
        '--inventory-quantity',
        '40',
        '--product-type',
        'SIMPLE',
        '--inventory-type',
        'SIMPLE',
        '--in-stock',
      ]);
    },
  },
  {
    title: 'Verify an embedded-app session token',
    async run(ctx) {
      ctx.say('The dashboard hands the app a 60-second, single-use token; the tour mints one as the dashboard would.');
      const token = ctx.sandbox.mintSessionToken();
      await ctx.run(['session', 'verify', '--stdin'], { stdin: token });
      ctx.say('The same token a second time is refused: the app should create its own session after the first check.');
      await ctx.run(['session', 'verify', '--stdin'], { stdin: token, expectCode: 1 });
    },
  },
];

/** The customers of the batch: none is step 8's, so no row looks like the claim filed there. */
const BATCH_CUSTOMERS = ['Bob Baker', 'Carol Chen', 'Dave Diaz', 'Erin Evans', 'Frank Fox'];

/** The template's example row once per customer, each with its own e-mail, name and price (the third's is `badPrice` when given). */
function batchCsv(templateCsv: string, badPrice?: string): string {
  const [header, example] = parse(templateCsv) as [string[], string[]];
  const at = (column: string) => header.indexOf(column);
  const rows = BATCH_CUSTOMERS.map((name, i) => {
    const [first, last] = name.split(' ') as [string, string];
    const row = [...example];
    row[at('customer.email')] = `${first.toLowerCase()}@example.com`;
    row[at('shippingAddress.firstName')] = first;
    row[at('shippingAddress.lastName')] = last;
    row[at('item.details')] = `Batch row ${i + 1}`;
    row[at('item.price')] = i === 2 && badPrice !== undefined ? badPrice : `${101 + i}.00`;
    return row;
  });
  return stringify([header, ...rows]);
}

/** Tour steps of the claims commands: one claim, then a small journaled batch, fixed and resumed. */
const claimsSteps: TourStep[] = [
  {
    title: 'File one warranty claim',
    async run(ctx) {
      ctx.say('`claims template --json` prints a complete example claim; flags override any of its fields.');
      const template = await ctx.run(['claims', 'template', '--json']);
      const path = join(ctx.configDir, 'claim.json');
      writeFileSync(path, template.stdout);
      ctx.say('Missing or malformed fields are named before anything is sent:');
      await ctx.run(['claims', 'file', '--data', path, '--item-price', 'cheap'], { expectCode: 2 });
      ctx.say('Filed: stdout carries the sourceOrderId of the order created for the claim.');
      await ctx.run(['claims', 'file', '--data', path, '--resolution', 'STORE_CREDIT', '--issue-type', 'DAMAGED']);
    },
  },
  {
    title: 'File a batch from a spreadsheet, resumably',
    async run(ctx) {
      ctx.say(
        '`claims template --csv` prints the columns (the field paths) and an example row; the tour writes a row like it for each of five other customers to claims.csv, one with a typo in its price.',
      );
      const template = await ctx.run(['claims', 'template', '--csv']);
      const csv = join(ctx.configDir, 'claims.csv');
      writeFileSync(csv, batchCsv(template.stdout, 'n/a'));
      ctx.say('--validate-only reads every row and sends nothing: the bad row is named with its line and field.');
      await ctx.run(['claims', 'file', '--from', 'claims.csv', '--validate-only'], { expectCode: 3 });
      ctx.say(
        'Each row is journaled in claims.csv.journal.jsonl before it is sent; on a terminal a progress line runs on stderr. The four valid rows are filed; the bad one is not sent, so the run exits 3.',
      );
      const fileBatch = ['claims', 'file', '--from', 'claims.csv', '--concurrency', '2', '--out', 'results.csv'];
      await ctx.run(fileBatch, { expectCode: 3 });
      ctx.say(
        'The tour corrects the price on line 4. The same command again sends nothing twice: the four filed rows are skipped, and only the corrected row is sent.',
      );
      writeFileSync(csv, batchCsv(template.stdout));
      await ctx.run(fileBatch);
    },
  },
];

/** Tour steps of the giftcard commands: check the provider, issue credit for a claim through the trigger, show the ledger. */
const giftcardSteps: TourStep[] = [
  {
    title: 'Check the gift card provider settings',
    async run(ctx) {
      ctx.say('`giftcard setup --check` tests the token and the store domain with a harmless lookup; it issues nothing.');
      await ctx.run(['giftcard', 'setup', '--check']);
    },
  },
  {
    title: 'Issue store credit for a claim, exactly once',
    async run(ctx) {
      ctx.say('A claim resolved with store credit: the trigger workflow is tried first, and the loyalty card is polled until it grew by the amount.');
      const claim = ['giftcard', 'issue', '--claim', 'CLM-1001', '--order', '1001', '--amount', '25.00'];
      const customer = ['--email', 'alice@example.com', '--name', 'Alice Example', '--customer-id', 'cust_1001'];
      await ctx.run([...claim, ...customer, '--dry-run']);
      await ctx.run([...claim, ...customer, '--yes']);
      ctx.say('The same claim again is refused: the ledger shows the earlier issuance.');
      await ctx.run([...claim, ...customer, '--yes'], { expectCode: 3 });
    },
  },
  {
    title: 'The ledger of issuances',
    async run(ctx) {
      ctx.say('Every attempt and outcome is on record, with the OS user who ran it.');
      await ctx.run(['giftcard', 'history']);
    },
  },
];
