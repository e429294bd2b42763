import type { Command } from 'commander';
import { resolve } from 'node:path';
import { journalRepairTarget, serviceOrigin } from '../../claims/journal.js';
import { claimFile } from '../../claims/record-index.js';
import { repairTargetOf } from '../../record/repair.js';
import { recordPlace } from '../../config/record-dir.js';
import type { Deps } from '../../cli/deps.js';
import { type RepairOptions, runRepair } from '../repair-verb.js';

interface ClaimsRepairOptions extends RepairOptions {
  /** A batch journal to repair instead of the record of claims. */
  journal?: string;
}

export function register(group: Command, deps: Deps): void {
  group
    .command('repair')
    .description("Set aside the record of claims' lines opcli cannot read (a crash, a bad edit), keeping a copy, so claims can be filed again")
    .option('--journal <path>', "repair a batch's journal (the path its error named) instead of the record of claims")
    .option('-y, --yes', 'repair without asking (required when not on a terminal)')
    .option('--json', 'print what was set aside as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli claims repair
  $ opcli claims repair --yes
  $ opcli claims repair --journal claims.csv.journal.jsonl

A line of the record of claims opcli cannot read stops every command that files a claim (it could be
the record of a claim already filed). Before repairing, look in the merchant dashboard (the
order-protection app's claims) for the claims filed around the time of the damage: the API cannot look
a claim up. The repair keeps the damaged file whole as
claims-record-<id>.jsonl.damaged-<time>, and replaces each damaged line, in place, by a line saying it
was set aside; a claim a damaged line still names is held as uncertain afterwards. Lines written by
a newer opcli are not set aside: upgrade. A batch's journal (--journal) is repaired the same way, kept
as <journal>.damaged-<time>; a row a damaged line still names is held as uncertain.
Exit codes: 0 repaired, or nothing to repair; 1 the confirmation declined (nothing changed); 2 a line of a
newer opcli, or nobody can confirm; 130 interrupted (Ctrl-C).`,
    )
    .action(async (flags: { yes?: boolean; json?: boolean; journal?: string }) => {
      await run({ yes: !!flags.yes, json: !!flags.json, journal: flags.journal }, deps);
    });
}

/** Shows the damaged lines, confirms, and sets them aside. */
export async function run(opts: ClaimsRepairOptions, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  const store = { origin: serviceOrigin(profile.baseUrl), storeId: profile.storeId ?? null };
  const journal = opts.journal !== undefined;
  const what = journal ? 'journal' : 'record of claims';
  const target = journal
    ? journalRepairTarget(resolve(opts.journal as string), { ...store, profile: profile.name }, deps.now)
    : repairTargetOf(recordPlace(deps.configDir(), profile), claimFile(store));
  const words = {
    what,
    short: what,
    jsonKey: journal ? 'journal' : 'record',
    jsonLineKey: journal,
    held: () => `; the ${journal ? 'row' : 'claim'} it names stays held as uncertain`,
    question: `Have you checked the store's ${journal ? 'claims' : 'orders'} around the time of the damage, and set these lines aside?`,
    worksAgain: '`opcli claims file`',
  };
  await runRepair(target, words, opts, deps);
}
