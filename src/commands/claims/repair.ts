import type { Command } from 'commander';
import { serviceOrigin } from '../../claims/journal.js';
import { recordRepairTarget } from '../../claims/record-repair.js';
import { recordPlace } from '../../config/record-dir.js';
import type { Deps } from '../../core/deps.js';
import { ExitCode, PlainExit, UsageError } from '../../core/errors.js';
import * as output from '../../core/output.js';
import { describeDamage } from '../../core/record-lines.js';
import { planRepairOf, repairFile } from '../../core/record-repair.js';

/** Flag values of `claims repair`. */
export interface ClaimsRepairOptions {
  yes: boolean;
  json: boolean;
}

/** Registers `claims repair`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('repair')
    .description("Set aside the record of claims' lines opcli cannot read (a crash, a bad edit), keeping a copy, so claims can be filed again")
    .option('-y, --yes', 'repair without asking (required when not on a terminal)')
    .option('--json', 'print what was set aside as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli claims repair
  $ opcli claims repair --yes

A line of the record of claims opcli cannot read stops every command that files a claim (it could be
the record of a claim already filed). Before repairing, look in the merchant dashboard (the
order-protection app's claims) for the claims filed around the time of the damage: the API cannot look
a claim up. The repair keeps the damaged file whole as
claims-record-<id>.jsonl.damaged-<time>, and replaces each damaged line, in place, by a line saying it
was set aside; a claim a damaged line still names is held as uncertain afterwards. Lines written by
a newer opcli are not set aside: upgrade.
Exit codes: 0 repaired, or nothing to repair; 1 the confirmation declined (nothing changed); 2 a line of a
newer opcli, or nobody can confirm; 130 interrupted (Ctrl-C).`,
    )
    .action(async (flags: { yes?: boolean; json?: boolean }) => {
      await run({ yes: !!flags.yes, json: !!flags.json }, deps);
    });
}

/** Shows the damaged lines, confirms, and sets them aside. */
export async function run(opts: ClaimsRepairOptions, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  const target = recordRepairTarget(
    recordPlace(deps.configDir(), profile),
    { origin: serviceOrigin(profile.baseUrl), storeId: profile.storeId ?? null },
    deps.now,
  );
  const plan = planRepairOf(target);
  const lines = (p: typeof plan) => p.lines.map((d) => ({ line: d.line, kind: d.kind, what: describeDamage(d) }));
  if (plan.lines.length === 0) {
    if (opts.json) output.printJson(deps, { record: plan.ledger, repaired: false, lines: [] });
    else deps.err(`The record of claims ${plan.ledger} has no damaged line: nothing to repair.\n`);
    return;
  }
  if (!opts.json) {
    deps.err(`The record of claims ${plan.ledger} has ${plan.lines.length} damaged line(s):\n`);
    for (const d of plan.lines) deps.err(`  ${describeDamage(d)}${d.key ? '; the claim it names stays held as uncertain' : ''}\n`);
  }
  if (!opts.yes) {
    if (!deps.canPrompt()) {
      throw new UsageError(
        'Repairing the record of claims sets lines aside and needs a confirmation, but nobody can answer a prompt here.',
        'Pass --yes to repair.',
      );
    }
    const ok = await (await deps.prompter()).confirm({
      message: "Have you checked the store's orders around the time of the damage, and set these lines aside?",
      default: false,
    });
    if (!ok) throw new PlainExit('Nothing was changed.', ExitCode.declined);
  }
  const done = await repairFile(target, deps, 'was cut short by an interrupted write');
  if (opts.json) output.printJson(deps, { record: done.ledger, repaired: true, copy: done.copy, lines: lines(done) });
  else deps.err(`Set ${done.lines.length} line(s) aside; the damaged file is kept as ${done.copy}. \`opcli claims file\` works again.\n`);
}
