/**
 * The command tree completion offers, read from the commands themselves: every group's
 * register() is loaded into a scratch program, so a new verb or flag is completed without anyone
 * editing a list. Only `opcli completion` pays for loading every group.
 */
import { Command } from 'commander';
import type { Deps } from '../../deps.js';

export interface CompletionTree {
  /** Global options (long and short forms). */
  globals: string[];
  /** Options of the globals that take a profile name. */
  profileFlags: string[];
  /** Top-level commands: their verbs (each with its options) and their own options. */
  commands: Record<string, { verbs: Record<string, string[]>; flags: string[] }>;
  /** Setting keys, for `config get|set|unset`. */
  configKeys: string[];
}

function flagsOf(cmd: Command): string[] {
  const out: string[] = [];
  for (const o of cmd.options) {
    if ((o as { hidden?: boolean }).hidden) continue;
    if (o.long) out.push(o.long);
    if (o.short) out.push(o.short);
  }
  return [...out, '--help'];
}

/** Builds the tree from the registered commands. */
export async function buildTree(deps: Deps): Promise<CompletionTree> {
  const [{ GROUPS, buildProgram }, { SETTING_KEYS }] = await Promise.all([import('../../cli.js'), import('../../config/settings-schema.js')]);
  const top = await buildProgram(deps, undefined);
  const commands: CompletionTree['commands'] = {};
  for (const group of GROUPS) {
    const scratch = new Command('opcli');
    await (await group.load()).register(scratch, deps);
    const cmd = scratch.commands.find((c) => c.name() === group.name);
    if (!cmd) continue;
    const verbs: Record<string, string[]> = {};
    for (const verb of cmd.commands) verbs[verb.name()] = flagsOf(verb);
    commands[group.name] = { verbs, flags: flagsOf(cmd) };
  }
  return { globals: flagsOf(top), profileFlags: ['-p', '--profile'], commands, configKeys: SETTING_KEYS.map((k) => k.key) };
}
