/**
 * What `claims repair` and `giftcard repair` share: show a record's damaged lines, confirm, and set
 * them aside (src/record/repair.ts), in the words of the record each repairs.
 */
import type { Deps } from '../cli/deps.js';
import { ExitCode, PlainExit, UsageError } from '../core/errors.js';
import * as output from '../core/output.js';
import type { DamagedLine } from '../record/damage.js';
import { describeDamage } from '../record/damage.js';
import { planRepairOf, type RepairTarget, repairFile } from '../record/repair.js';

/** Flag values of a repair verb. */
export interface RepairOptions {
  yes: boolean;
  json: boolean;
}

/** How a repair verb names its record and what follows from it. */
export interface RepairWords {
  /** "record of claims", "gift card ledger": "The … <path> has …". */
  what: string;
  /** "record of claims", "ledger": "Repairing the … sets lines aside …". */
  short: string;
  /** The file's path in the JSON printed: `record`, `ledger`. */
  jsonKey: string;
  /** Whether each line printed as JSON carries the key it names (null: none). */
  jsonLineKey: boolean;
  /** What follows a damaged line that names a key: "; the claim it names stays held as uncertain". */
  held(key: string): string;
  /** The confirmation's question. */
  question: string;
  /** The command that works again: "`opcli claims file`". */
  worksAgain: string;
}

/** Shows the damaged lines of `target`, confirms, and sets them aside. */
export async function runRepair(target: RepairTarget, words: RepairWords, opts: RepairOptions, deps: Deps): Promise<void> {
  const plan = planRepairOf(target);
  const lines = (ds: DamagedLine[]) =>
    ds.map((d) => ({ line: d.line, kind: d.kind, ...(words.jsonLineKey ? { key: d.key ?? null } : {}), what: describeDamage(d) }));
  if (plan.lines.length === 0) {
    if (opts.json) output.printJson(deps, { [words.jsonKey]: plan.path, repaired: false, lines: [] });
    else deps.err(`The ${words.what} ${plan.path} has no damaged line: nothing to repair.\n`);
    return;
  }
  if (!opts.json) {
    deps.err(`The ${words.what} ${plan.path} has ${plan.lines.length} damaged line(s):\n`);
    for (const d of plan.lines) deps.err(`  ${describeDamage(d)}${d.key ? words.held(d.key) : ''}\n`);
  }
  if (!opts.yes) {
    if (!deps.canPrompt()) {
      throw new UsageError(
        `Repairing the ${words.short} sets lines aside and needs a confirmation, but nobody can answer a prompt here.`,
        'Pass --yes to repair.',
      );
    }
    const ok = await (await deps.prompter()).confirm({ message: words.question, default: false });
    if (!ok) throw new PlainExit('Nothing was changed.', ExitCode.declined);
  }
  const done = await repairFile(target, deps);
  if (opts.json) output.printJson(deps, { [words.jsonKey]: done.path, repaired: true, copy: done.copy, lines: lines(done.lines) });
  else deps.err(`Set ${done.lines.length} line(s) aside; the damaged file is kept as ${done.copy}. ${words.worksAgain} works again.\n`);
}
