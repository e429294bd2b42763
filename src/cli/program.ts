import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { pickProfileName } from '../config/profile.js';
import { SettingsStore } from '../config/settings.js';
import { safeLine } from '../text/safe.js';
import { type Deps, VERSION } from './deps.js';
import { completeValues } from '../core/flags.js';
import { PROGRESS_MODES, type ProgressMode } from '../core/ports.js';
import { UsageError } from '../core/errors.js';
import { terminalWidth } from '../core/output.js';

/** A group's registration; `verb`, when given, is the verb that runs: a group may register only it (the others cost start-up time). */
type Register = (program: Command, deps: Deps, verb?: string) => void | Promise<void>;

/** A command group: its name and one-line description are known at start-up; its code loads on use. */
interface Group {
  name: string;
  description: string;
  load: () => Promise<{ register: Register }>;
}

/** A verb's registration on its group. */
type Verb = (group: Command, deps: Deps) => void | Promise<void>;

/** A verb whose module loads only when the verb is built. */
export function lazyVerb(load: () => Promise<{ register: Verb }>): Verb {
  return async (group, deps) => (await load()).register(group, deps);
}

/** A group's `register` that builds only `verb` when it names one of `verbs` (a one-off builds no other), else every verb. */
export function lazyGroup(spec: { name: string; description: string; examples: string; verbs: Record<string, Verb> }): Register {
  return async (program, deps, verb) => {
    const group = program.command(spec.name).description(spec.description).addHelpText('after', `\nExamples:\n${spec.examples}`);
    for (const [name, register] of Object.entries(spec.verbs)) if (verb === undefined || !(verb in spec.verbs) || verb === name) await register(group, deps);
  };
}

/** Every top-level command; only the group that runs is imported. */
export const GROUPS: Group[] = [
  { name: 'auth', description: 'Log in, show the login, print or refresh the token, log out', load: () => import('../commands/auth/index.js') },
  { name: 'orders', description: 'List and update orders', load: () => import('../commands/orders/index.js') },
  { name: 'variants', description: 'Create product variants', load: () => import('../commands/variants/index.js') },
  { name: 'session', description: 'Verify embedded-app session tokens', load: () => import('../commands/session/index.js') },
  { name: 'claims', description: 'File warranty claims, one or in batches from CSV/JSONL', load: () => import('../commands/claims/index.js') },
  { name: 'giftcard', description: 'Issue store credit through the gift card provider chain', load: () => import('../commands/giftcard/index.js') },
  { name: 'record', description: "Set up a team's record of claims and credits in PostgreSQL", load: () => import('../commands/record/index.js') },
  { name: 'api', description: 'Make an authenticated request to any endpoint', load: () => import('../commands/api/index.js') },
  { name: 'config', description: 'Read and write profile settings', load: () => import('../commands/config/index.js') },
  { name: 'profiles', description: 'List, select and remove profiles', load: () => import('../commands/profiles/index.js') },
  { name: 'sandbox', description: 'Run a local emulator of the API and the gift card provider', load: () => import('../commands/sandbox/index.js') },
  {
    name: 'demo',
    description: 'A guided tour of every command against a local sandbox',
    // The tour runs each command through runCli, given here so that the demo does not import this file back.
    load: async () => (await import('../commands/demo/index.js')).group(runCli),
  },
  { name: 'completion', description: 'Print a shell completion script (bash, zsh, fish, PowerShell)', load: () => import('../commands/completion/index.js') },
];

const EXAMPLES = `
Examples:
  $ opcli sandbox --write-profile default   # a local API to try things on
  $ opcli auth login                        # log in through the browser
  $ opcli orders list --size 10
  $ opcli claims file --from claims.csv     # file a batch, resumable
  $ opcli giftcard issue --claim C1 --order 1001 --amount 25.00 --email a@b.co --name "A B"

Exit codes: 0 ok, 1 failed, 2 usage or validation, 3 some batch rows failed, 4 log in needed, 130 interrupted.
Learn more: opcli <command> --help`;

/** The global options, declared once: the program takes them, and the scans of argv below skip their values. */
function globalOptions(): Option[] {
  return [
    new Option('-p, --profile <name>', 'settings profile to use (default: OPCLI_PROFILE, then the current profile, then "default")'),
    new Option('--verbose', 'trace HTTP exchanges on stderr, secrets redacted'),
    new Option('--no-input', 'never prompt; fail with the flag to pass instead'),
    new Option('--no-color', 'no colour (also NO_COLOR)'),
    new Option(
      '--progress <mode>',
      'progress of long work: auto (a redrawn line on a terminal, a sentence every 10 s elsewhere), plain or none (also OPCLI_PROGRESS)',
    ),
  ];
}

/** The global options that take a value (`-p`, `--profile`, `--progress`): the next word is theirs. */
const TAKES_VALUE = new Set(globalOptions().flatMap((o) => (o.required ? [o.short, o.long] : [])));

/** Where the first word that is not a global option (nor one's value) stands, `--` included; -1 when none. */
function firstWord(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (TAKES_VALUE.has(arg)) i++;
    else if (arg === '--' || !arg.startsWith('-')) return i;
  }
  return -1;
}

/** The first word that names a command, skipping global options and their values. */
export function commandWord(argv: string[]): string | undefined {
  const at = firstWord(argv);
  if (argv[at] === '--') return argv[at + 1];
  if (argv[at] === 'help') return argv.slice(at + 1).find((a) => !a.startsWith('-')) ?? 'help';
  return argv[at];
}

/** The word after the command group's: the verb that runs, or undefined. */
export function verbWord(argv: string[], group: string | undefined): string | undefined {
  const at = group === undefined ? -1 : argv.indexOf(group);
  return at < 0 ? undefined : commandWord(argv.slice(at + 1));
}

/** The program with the named group loaded (with `verb`, that verb alone if the group knows it) and the others as stubs. */
export async function buildProgram(deps: Deps, word: string | undefined, json = false, wrap?: Wrap, verb?: string): Promise<Command> {
  const program = new Command('opcli');
  program
    .version(VERSION, '-V, --version', 'print the version')
    .description('The command line for the order-protection and claims API.')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', EXAMPLES)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({
      // Help (and its Examples, Required, Exit codes prose) wrapped to the terminal at word boundaries.
      writeOut: (s) => deps.out(wrap ? wrap.wrapProse(s, terminalWidth(deps, 'stdout')) : s),
      writeErr: (s) => {
        if (json && s.startsWith('(add --help')) return;
        deps.err(json || !wrap ? s : wrap.wrapProse(s, terminalWidth(deps, 'stderr')));
      },
      getOutHelpWidth: () => terminalWidth(deps, 'stdout'),
      getErrHelpWidth: () => terminalWidth(deps, 'stderr'),
      // One prefix for every error: commander's own ("error: unknown option") gets opcli's "Error:",
      // and under --json it becomes the one JSON error object.
      outputError: (text, write) => {
        const message = text.replace(/^error:\s*/i, '').trim();
        if (json) {
          write(`${JSON.stringify({ error: { message, hint: 'Run the command with --help for its usage.', exitCode: 2 } })}\n`);
        } else write(`Error: ${text.replace(/^error:\s*/i, '')}`);
      },
    });
  for (const option of globalOptions()) program.addOption(option);
  completeValues(program, { '--profile': 'profiles', '--progress': async () => PROGRESS_MODES });
  program.hook('preAction', async () => {
    const o = program.opts<{ profile?: string; verbose?: boolean; input?: boolean; color?: boolean; progress?: string }>();
    deps.globals.profile = o.profile;
    deps.globals.verbose = !!o.verbose;
    deps.globals.input = o.input !== false;
    if (o.color === false) {
      deps.io.colorStdout = false;
      deps.io.colorStderr = false;
    }
    await resolveDisplay(deps, o.progress);
  });
  for (const group of GROUPS) {
    if (group.name === word) await (await group.load()).register(program, deps, verb);
    else program.command(group.name).description(group.description);
  }
  if (GROUPS.some((g) => g.name === word)) refuseRepeatedOptions(program);
  return program;
}

/** A progress mode named by `source` (a flag, a variable), or a usage error listing the modes. */
function parseProgressMode(raw: string, source: string): ProgressMode {
  const value = raw.trim().toLowerCase();
  if ((PROGRESS_MODES as readonly string[]).includes(value)) return value as ProgressMode;
  throw new UsageError(
    `${source} "${safeLine(raw)}" is not a progress mode: expected auto, plain or none.`,
    'auto redraws a line on a terminal and writes a sentence every 10 s elsewhere; plain always writes sentences; none writes nothing.',
  );
}

/** OPCLI_ACCESSIBLE: 1, true or yes turn the accessible mode on, 0, false or no off; anything else is a usage error naming it. */
function parseAccessible(raw: string): boolean {
  const value = raw.toLowerCase();
  if (['1', 'true', 'yes'].includes(value)) return true;
  if (['0', 'false', 'no'].includes(value)) return false;
  throw new UsageError(
    `OPCLI_ACCESSIBLE "${safeLine(raw)}" is not 1 or 0.`,
    'Set OPCLI_ACCESSIBLE=1 for the accessible mode, 0 for the usual screens, or unset it.',
  );
}

/** Sets `deps.globals.progress` and `accessible`: the flag wins over the environment, the environment over the profile's settings. */
export async function resolveDisplay(deps: Deps, flag: string | undefined): Promise<void> {
  const env = deps.env;
  if (flag !== undefined) deps.globals.progress = parseProgressMode(flag, '--progress');
  else if (env.OPCLI_PROGRESS) deps.globals.progress = parseProgressMode(env.OPCLI_PROGRESS, 'OPCLI_PROGRESS');
  const accessibleFromEnv = env.OPCLI_ACCESSIBLE !== undefined && env.OPCLI_ACCESSIBLE !== '';
  if (accessibleFromEnv) deps.globals.accessible = parseAccessible(env.OPCLI_ACCESSIBLE as string);
  if (deps.globals.progress !== undefined && accessibleFromEnv) return;
  const settings = await profileSettings(deps);
  if (deps.globals.progress === undefined && settings?.progress) deps.globals.progress = settings.progress;
  if (!accessibleFromEnv && settings?.accessible !== undefined) deps.globals.accessible = settings.accessible;
}

/** The active profile's display settings; none when the settings file is missing or unreadable (the command reports that itself). */
async function profileSettings(deps: Deps): Promise<{ progress?: ProgressMode; accessible?: boolean } | undefined> {
  try {
    // No settings file: nothing to read, and no config folder is created for it.
    if (!existsSync(join(deps.configDir(), 'settings.json'))) return undefined;
    const settings = await SettingsStore.openForReading(deps.configDir());
    const name = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
    const profile = settings.getProfile(name);
    return { progress: profile?.progress, accessible: profile?.accessible };
  } catch {
    return undefined;
  }
}

type Wrap = typeof import('../text/wrap.js');

/** `help orders list` → `orders list --help`, so the help of a verb is shown, not its group's. */
export function rewriteHelp(argv: string[]): string[] {
  const at = firstWord(argv);
  return argv[at] === 'help' ? [...argv.slice(0, at), ...argv.slice(at + 1), '--help'] : argv;
}

/** Notices on a terminal's stderr wrap at word boundaries; a command to copy (`opcli …`) is left whole, a secret one word for the redactor. */
function wrapNotices(deps: Deps, w: Wrap): void {
  if (!deps.io.stderrIsTTY) return;
  const err = deps.err;
  deps.err = (text) => {
    const width = terminalWidth(deps, 'stderr');
    err(
      text
        .split('\n')
        .map((line) => (line.length <= width || /\bopcli /.test(line) || line.includes('\r') ? line : w.wrapText(line, width)))
        .join('\n'),
    );
  };
}

/** Whether the run asked for JSON output, so an error is printed as one JSON object. */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--json' || a === '--jsonl');
}

/** Runs opcli with `argv` (without node and script) and returns the exit code. Never exits the process. */
export async function runCli(input: string[], deps: Deps): Promise<number> {
  // The shells' completion shims (cobra's hidden command): the words are the line being completed, not options to parse.
  if (input[0] === '__complete') {
    try {
      return await (await import('../commands/completion/complete.js')).complete(input.slice(1), deps);
    } finally {
      await deps.dispose();
    }
  }
  const argv = rewriteHelp(input);
  // The wrapper (wrap-ansi, string-width) loads only when something may need it: help, or a terminal.
  let wrap: Wrap | undefined;
  if (deps.io.stdoutIsTTY || deps.io.stderrIsTTY || argv.length === 0 || argv.some((a) => a === '--help' || a === '-h' || a === 'help')) {
    wrap = await import('../text/wrap.js');
    wrapNotices(deps, wrap);
  }
  try {
    const word = commandWord(argv);
    const program = await buildProgram(deps, word, wantsJson(argv), wrap, verbWord(argv, word));
    if (argv.length === 0) {
      program.outputHelp();
      return 0;
    }
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      return 2;
    }
    const { reportError } = await import('./report-error.js');
    return reportError(error, deps, { json: wantsJson(argv) });
  } finally {
    await deps.dispose();
  }
}

/** Refuses a value flag given twice (commander would keep the last silently) and a boolean given both ways, on every command. */
export function refuseRepeatedOptions(root: Command): void {
  const visit = (cmd: Command) => {
    const seen = new Map<string, string>();
    for (const option of cmd.options) {
      if (option.variadic || !option.long) continue;
      const takesValue = option.required || option.optional;
      cmd.on(`option:${option.name()}`, () => {
        const key = option.attributeName();
        const first = seen.get(key);
        const flag = option.long as string;
        if (first === undefined) {
          seen.set(key, flag);
          return;
        }
        // A repeatable flag's parser collects the occurrences into a list: that is what it is for.
        if (Array.isArray(cmd.getOptionValue(key))) return;
        if (takesValue) throw new UsageError(`${flag} was given more than once.`, `Give ${flag} once, with the value you mean.`);
        if (first !== flag) throw new UsageError(`${first} and ${flag} contradict each other.`, 'Give one of them.');
      });
    }
    for (const sub of cmd.commands) visit(sub);
  };
  visit(root);
}
