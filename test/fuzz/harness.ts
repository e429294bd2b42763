/**
 * Runs one generated case through the real CLI (in-process, injected deps, a sandbox behind it) and
 * lists every way it broke the promise: a documented exit code, an `Error:` line naming the culprit,
 * no stack trace or "unexpected failure", nothing sent, no file of the user's changed.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleClaim } from '../../src/commands/claims/template.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { runOpcli, sandboxProfile } from '../helpers.js';

/** One generated input: a command line (and maybe environment or files) wrong in one way. */
export interface Case {
  /** `variants create` */
  command: string;
  /** The flag, argument, file or variable that is wrong: `--price`, `productId`, `settings.json`. */
  target: string;
  /** The class of wrongness: `negative`, `control`, `invalid-json`. */
  cls: string;
  argv: string[];
  env?: Record<string, string>;
  stdin?: string;
  /** The error must mention one of these. */
  mentions: string[];
  /** The exit code documented for this case (2 for usage and validation). */
  code: number;
  /** For a batch: checks the request bodies that were sent (default: nothing may be sent). */
  sent?: (bodies: string[]) => string[];
  /** A value a real server might accept: opcli sends it with a `Warning:` line naming the field. */
  warn?: boolean;
  /** Writes the files this case needs (a damaged config file, a bad row) before the run. */
  prepare?: (dirs: { config: string; inputs: string }) => void;
  /** Config entries the case may write by design (a batch that files rows keeps its record's witness). */
  writes?: RegExp;
}

/** Hashes every entry of a folder tree (contents, symlink targets, names). */
export function hashTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const key = `${rel}${name}`;
      const st = lstatSync(path);
      if (st.isSymbolicLink()) out.set(key, `link:${readlinkSync(path)}`);
      else if (st.isDirectory()) {
        out.set(key, 'dir');
        walk(path, `${key}/`);
      } else out.set(key, createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  walk(root, '');
  return out;
}

function diffTrees(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [k, v] of before) if (after.get(k) !== v) changed.push(after.has(k) ? `changed ${k}` : `removed ${k}`);
  for (const k of after.keys()) if (!before.has(k)) changed.push(`created ${k}`);
  return changed;
}

/** The user's input files every baseline and case may point at, and the odd paths the generators name. */
export function writeInputs(inputs: string, sandbox: Sandbox): void {
  writeFileSync(join(inputs, 'claim.json'), JSON.stringify(exampleClaim(sandbox.store.storeId)));
  mkdirSync(join(inputs, 'folder'), { recursive: true });
  symlinkSync(join(inputs, 'nowhere', 'file.json'), join(inputs, 'dangling-symlink'));
  symlinkSync(join(inputs, 'loop-b'), join(inputs, 'loop-a'));
  symlinkSync(join(inputs, 'loop-a'), join(inputs, 'loop-b'));
}

/** A config folder with a logged-in profile (and a spare one) and a folder of input files, under `root`. */
export async function makeDirs(sandbox: Sandbox, root: string, name: string): Promise<{ config: string; inputs: string }> {
  const config = join(root, name.replace(/[^A-Za-z0-9_.-]/g, '-'), 'config');
  const inputs = join(root, name.replace(/[^A-Za-z0-9_.-]/g, '-'), 'inputs');
  mkdirSync(config, { recursive: true });
  mkdirSync(inputs, { recursive: true });
  await sandboxProfile(sandbox, config);
  await sandboxProfile(sandbox, config, { profile: 'spare' });
  writeInputs(inputs, sandbox);
  return { config, inputs };
}

/** Turns a path placeholder of the generators into a path in the inputs folder. */
export function resolvePlaceholder(value: string, inputs: string): string {
  switch (value) {
    case '@folder':
      return join(inputs, 'folder');
    case '@dangling-symlink':
      return join(inputs, 'dangling-symlink');
    case '@missing':
      return join(inputs, 'missing.json');
    case '@symlink-loop':
      return join(inputs, 'loop-a');
    case '@in-missing-folder':
      return join(inputs, 'nowhere', 'out.csv');
    default:
      return value;
  }
}

const STACK = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m;

/** How long a case may run before it counts as hanging (a bad value taken as good, a server started). */
const HANG_MS = 5_000;

/** Runs a case and returns what went wrong (empty: the promise held). */
export async function check(c: Case, sandbox: Sandbox, dirs: { config: string; inputs: string }): Promise<string[]> {
  c.prepare?.(dirs);
  const beforeConfig = hashTree(dirs.config);
  const beforeInputs = hashTree(dirs.inputs);
  sandbox.resetLog();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('fuzz: the case hung')), HANG_MS);
  let browserOpened = false;
  const r = await runOpcli(c.argv, {
    env: { OPCLI_CONFIG_DIR: dirs.config, CI: 'true', ...c.env },
    stdin: c.stdin ?? '',
    cwd: dirs.inputs,
    signal: controller.signal,
    openBrowser: async () => {
      browserOpened = true;
      throw new Error('fuzz: no browser here');
    },
  }).finally(() => clearTimeout(timer));
  const problems: string[] = [];
  if (r.code !== c.code) problems.push(`exit ${r.code}, expected ${c.code}`);
  const said = r.stderr.toLowerCase();
  if (c.warn) {
    if (!/^Warning: /m.test(r.stderr)) problems.push('no "Warning:" line');
    if (!c.mentions.some((m) => said.includes(m.toLowerCase()))) problems.push(`the warning names none of ${c.mentions.join(', ')}`);
    if (problems.length > 0) problems.push(`stderr: ${JSON.stringify(r.stderr.slice(0, 600))}`);
    return problems;
  }
  // With --json or --jsonl on the command line the error is one JSON line: { "error": { "message" … } }.
  const jsonError = c.argv.some((a) => a === '--json' || a === '--jsonl') && /^\{"error":\{"message":/m.test(r.stderr);
  if (!/^Error: /m.test(r.stderr) && !jsonError) problems.push('no "Error:" line');
  if (!c.mentions.some((m) => said.includes(m.toLowerCase()))) problems.push(`the error names none of ${c.mentions.map((m) => JSON.stringify(m)).join(', ')}`);
  if (STACK.test(r.stderr)) problems.push('a stack trace');
  if (said.includes('unexpected failure')) problems.push('"unexpected failure"');
  if (c.sent) problems.push(...c.sent(sandbox.requests.map((q) => q.body ?? '')));
  else if (sandbox.requests.length > 0) problems.push(`sent ${sandbox.requests.map((q) => `${q.method} ${q.path}`).join(', ')}`);
  if (browserOpened) problems.push('opened a browser');
  const configChanges = diffTrees(beforeConfig, hashTree(dirs.config)).filter((d) => !c.writes?.test(d.replace(/^\w+ /, '')));
  problems.push(...configChanges.map((d) => `config: ${d}`));
  problems.push(...diffTrees(beforeInputs, hashTree(dirs.inputs)).map((d) => `inputs: ${d}`));
  if (problems.length > 0) problems.push(`stderr: ${JSON.stringify(r.stderr.slice(0, 600))}`);
  return problems;
}
