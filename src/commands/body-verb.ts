/**
 * What the verbs that send one body (`orders update`, `variants create`) share: their flags (the
 * body's argument, --data and a flag per field, the verb's own options, then --dry-run and --json)
 * and how they end (the server's answer as JSON with --json, else one line on stderr).
 */
import type { Command } from 'commander';
import type { Deps } from '../cli/deps.js';
import { addFieldFlags, type FieldKind } from '../input/flags.js';
import { printJson } from '../core/output.js';

/** A verb that sends one body: its name, what it does, its one argument, the body it takes and its --dry-run and --json. */
export interface BodyVerb {
  name: string;
  description: string;
  argument: [name: string, description: string];
  /** What the --data file holds: `order fields`. */
  holds: string;
  kinds: FieldKind[];
  /** What --dry-run shows. */
  dryRun: string;
  /** What --json prints. */
  json: string;
  /** The verb's own options, declared before --dry-run and --json. */
  options?: (cmd: Command) => void;
}

/** Registers a body verb with its flags (--data, a JSON file or - for stdin, and one per field); the caller adds the help text and the action. */
export function addBodyVerb(group: Command, spec: BodyVerb): Command {
  const cmd = group
    .command(spec.name)
    .description(spec.description)
    .argument(...spec.argument)
    .option('--data <file>', `a JSON file with ${spec.holds}, or - to read standard input; flags override it`);
  addFieldFlags(cmd, spec.kinds);
  spec.options?.(cmd);
  return cmd.option('--dry-run', spec.dryRun).option('--json', spec.json);
}

/** Prints the server's answer as JSON (--json), or `done` as a notice on stderr. */
export async function printAnswer(deps: Deps, json: boolean, answer: unknown, done: string): Promise<void> {
  if (json) printJson(deps, answer);
  else deps.err(`${done}\n`);
}

/** Prints the request a command would send: method, path and body; nothing is sent. */
export function printDryRun(deps: Deps, method: string, path: string, body: unknown, json: boolean): void {
  if (json) deps.out(`${JSON.stringify({ method, path, body }, null, 2)}\n`);
  else deps.out(`${method} ${path}\nContent-Type: application/json\n\n${JSON.stringify(body, null, 2)}\n`);
  deps.err('Dry run: nothing was sent.\n');
}
