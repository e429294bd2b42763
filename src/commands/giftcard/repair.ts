import type { Command } from 'commander';
import type { Deps } from '../../core/deps.js';
import { ExitCode, PlainExit, UsageError } from '../../core/errors.js';
import { recordPlace } from '../../config/record-dir.js';
import { Ledger, osUser } from '../../giftcard/ledger.js';
import * as repair from '../../giftcard/repair.js';
import * as output from '../../core/output.js';
import { describeDamage } from '../../core/record-lines.js';

/** Flag values of `giftcard repair`. */
export interface RepairOptions {
  yes: boolean;
  json: boolean;
}

/** Registers `giftcard repair`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('repair')
    .description('Set aside the ledger lines opcli cannot read (a crash, a bad edit), keeping a copy, so store credit can be issued again')
    .option('-y, --yes', 'repair without asking (required when not on a terminal)')
    .option('--json', 'print what was set aside as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard repair
  $ opcli giftcard repair --yes

A ledger line opcli cannot read stops \`giftcard issue\` (it could be the record of a payment). Before
repairing, check at the provider the payments made around the time of the damage. The repair keeps
the damaged file whole as giftcard-ledger.jsonl.damaged-<time>, and replaces each damaged line, in
place, by a record saying it was set aside; a claim or order a damaged line still names is held as
uncertain afterwards (\`--force\` pays it). Lines written by a newer opcli are not set aside: upgrade.
Exit codes: 0 repaired, or nothing to repair; 1 the confirmation declined (nothing changed); 2 a line of a
newer opcli, or nobody can confirm; 130 interrupted (Ctrl-C).`,
    )
    .action(async (flags: { yes?: boolean; json?: boolean }) => {
      await run({ yes: !!flags.yes, json: !!flags.json }, deps);
    });
}

/** Shows the damaged lines, confirms, and sets them aside. */
export async function run(opts: RepairOptions, deps: Deps): Promise<void> {
  const ledger = new Ledger(recordPlace(deps.configDir(), await deps.profile()));
  const plan = repair.planRepair(ledger);
  const lines = (p: typeof plan) => p.lines.map((d) => ({ line: d.line, kind: d.kind, key: d.key ?? null, what: describeDamage(d) }));
  if (plan.lines.length === 0) {
    if (opts.json) output.printJson(deps, { ledger: plan.ledger, repaired: false, lines: [] });
    else deps.err(`The gift card ledger ${plan.ledger} has no damaged line: nothing to repair.\n`);
    return;
  }
  if (!opts.json) {
    deps.err(`The gift card ledger ${plan.ledger} has ${plan.lines.length} damaged line(s):\n`);
    for (const d of plan.lines) deps.err(`  ${describeDamage(d)}${d.key ? `; it names ${d.key.split('|').pop()}, which stays held as uncertain` : ''}\n`);
  }
  if (!opts.yes) {
    if (!deps.canPrompt()) {
      throw new UsageError('Repairing the ledger sets lines aside and needs a confirmation, but nobody can answer a prompt here.', 'Pass --yes to repair.');
    }
    const ok = await (await deps.prompter()).confirm({
      message: 'Have you checked the payments made around the time of the damage at the provider, and set these lines aside?',
      default: false,
    });
    if (!ok) throw new PlainExit('Nothing was changed.', ExitCode.declined);
  }
  const done = await repair.repairLedger(ledger, { now: deps.now, user: osUser() });
  if (opts.json) output.printJson(deps, { ledger: done.ledger, repaired: true, copy: done.copy, lines: lines(done) });
  else deps.err(`Set ${done.lines.length} line(s) aside; the damaged file is kept as ${done.copy}. \`opcli giftcard issue\` works again.\n`);
}
