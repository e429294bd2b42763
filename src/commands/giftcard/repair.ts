import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { recordPlace } from '../../config/record-dir.js';
import { LEDGER_LINES } from '../../giftcard/ledger.js';
import { repairTargetOf } from '../../record/repair.js';
import { type RepairOptions, runRepair } from '../repair-verb.js';

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
  const profile = await deps.profile();
  // With the record in PostgreSQL (record-url), the ledger file still read is the config folder's (src/giftcard/ledger-db.ts).
  const configDir = deps.configDir();
  await runRepair(
    repairTargetOf(profile.record ? { dir: configDir, configDir } : recordPlace(configDir, profile), LEDGER_LINES),
    {
      what: 'gift card ledger',
      short: 'ledger',
      jsonKey: 'ledger',
      jsonLineKey: true,
      held: (key) => `; it names ${key.split('|').pop()}, which stays held as uncertain`,
      question: 'Have you checked the payments made around the time of the damage at the provider, and set these lines aside?',
      worksAgain: '`opcli giftcard issue`',
    },
    opts,
    deps,
  );
}
