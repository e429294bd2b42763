/**
 * The command tree completion offers, read from the commands themselves: every group's
 * register() is loaded into a scratch program, so a new verb or flag is completed without anyone
 * editing a list. Only `opcli completion` pays for loading every group.
 */
import { Command, type Option } from 'commander';
import type { Deps } from '../../core/deps.js';
import { type ValueHint, valueHint } from './hints.js';
import { buildProgram, GROUPS } from '../../cli/program.js';
import { SETTING_KEYS } from '../../config/setting-keys.js';

/** What a flag's value completes to: enum values, `files`, `profiles`, or `any` (a value, nothing to offer). */
/** The shells `opcli completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;

export type ValueKind = ValueHint | 'any';

/** A place in the tree (the top, a group, a verb): its flags, and what the values of those that take one complete to. */
export interface Spot {
  /** Long and short forms. */
  flags: string[];
  /** By flag (long and short form): what its value completes to. Flags absent here take no value. */
  values: Record<string, ValueKind>;
}

export interface CompletionTree {
  /** Global options (long and short forms). */
  globals: string[];
  /** The global options that take a value, `-p/--profile` completing profile names. */
  globalValues: Record<string, ValueKind>;
  /** Options of the globals that take a profile name. */
  profileFlags: string[];
  /** Top-level commands: their verbs (each with its options) and their own options. */
  commands: Record<string, { verbs: Record<string, string[]>; flags: string[]; values: Record<string, Record<string, ValueKind>> }>;
  /** Setting keys, for `config get|set|unset`. */
  configKeys: string[];
  /** The shells `opcli completion` writes scripts for. */
  shells: readonly string[];
}

function visible(cmd: Command): Option[] {
  return cmd.options.filter((o) => !(o as { hidden?: boolean }).hidden);
}

function flagsOf(cmd: Command): string[] {
  const out: string[] = [];
  for (const o of visible(cmd)) {
    if (o.long) out.push(o.long);
    if (o.short) out.push(o.short);
  }
  return [...out, '--help'];
}

async function valuesOf(cmd: Command): Promise<Record<string, ValueKind>> {
  const out: Record<string, ValueKind> = {};
  for (const o of visible(cmd)) {
    const hint = await valueHint(o);
    if (hint === undefined) continue;
    if (o.long) out[o.long] = hint;
    if (o.short) out[o.short] = hint;
  }
  return out;
}

/** Builds the tree from the registered commands. */
export async function buildTree(deps: Deps): Promise<CompletionTree> {
  const top = await buildProgram(deps, undefined);
  const commands: CompletionTree['commands'] = {};
  for (const group of GROUPS) {
    const scratch = new Command('opcli');
    await (await group.load()).register(scratch, deps);
    const cmd = scratch.commands.find((c) => c.name() === group.name);
    if (!cmd) continue;
    const verbs: Record<string, string[]> = {};
    const values: Record<string, Record<string, ValueKind>> = { '': await valuesOf(cmd) };
    for (const verb of cmd.commands) {
      verbs[verb.name()] = flagsOf(verb);
      values[verb.name()] = await valuesOf(verb);
    }
    commands[group.name] = { verbs, flags: flagsOf(cmd), values };
  }
  const profileFlags = ['-p', '--profile'];
  const globalValues = await valuesOf(top);
  for (const f of profileFlags) globalValues[f] = 'profiles';
  return { globals: flagsOf(top), globalValues, profileFlags, commands, configKeys: SETTING_KEYS.map((k) => k.key), shells: SHELLS };
}
