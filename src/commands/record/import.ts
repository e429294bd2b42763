import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { ensureSharedDir } from '../../config/private-file.js';
import type { RecordPlace } from '../../config/record-dir.js';
import { UsageError } from '../../core/errors.js';
import { printJson } from '../../core/output.js';
import { issuanceKey } from '../../giftcard/ledger.js';
import type { ImportCounts } from '../../record-pg/import.js';
import type { ImportSource } from '../../record-pg/import-files.js';
import { checkText } from '../../core/flags.js';
import { safeLine, safeText } from '../../text/safe.js';

export interface ImportOptions {
  journals: string[];
  recordDir?: string;
  dryRun: boolean;
  json: boolean;
}

export function register(group: Command, deps: Deps): void {
  group
    .command('import')
    .description("Copy this computer's file record (claims, store credit, batch journals) into the team's record in PostgreSQL, once")
    .argument('[journals...]', 'batch journals to copy too (FILE.journal.jsonl, beside each input file a batch ran on)')
    .option('--record-dir <dir>', 'copy the record in this folder (a record-dir, or another config folder) instead of this profile’s')
    .option('--dry-run', 'read everything and say what would be copied; write nothing')
    .option('--json', 'print what was (or would be) copied as JSON')
    .addHelpText(
      'after',
      `
Copies the record of claims (one a store), the gift card ledger, and each batch journal named, as
this opcli or 0.2.0 wrote them, into the database of this profile's record-url. Every file is read
first: a damaged line stops the import naming the file, the line and its byte, before anything is
copied. Each file goes in as one transaction: importing again, from this computer or another one
holding a copy, adds nothing, and a file that grew adds only what is new. Afterwards no member
files a claim or pays a credit again that the file record shows filed, paid or possibly sent.

Without a record-url, the journals named are read into the record of claims of this computer (or
of its record-dir), as a batch run reads the journals beside its input: opcli 0.2.0 kept a batch's
claims only there, so \`claims history\` lists them once they are read in. Nothing is sent.

Examples:
  $ opcli record import --dry-run
  $ opcli record import
  $ opcli record import ~/claims/november.csv.journal.jsonl ~/claims/december.csv.journal.jsonl
  $ opcli record import --record-dir /mnt/team/opcli-record --json
  $ opcli record import claims.csv.journal.jsonl     # no record-url: into this computer's record of claims

Exit codes: 0 copied (or nothing new), 1 the database failed (one line: which, and that rerunning
is safe), 2 usage, no record-url and no journal, or a file that cannot be read (nothing was copied).
Guide: docs/guides/team-record.md ("Moving a team onto it").`,
    )
    .action(async (journals: string[], flags: { recordDir?: string; dryRun?: boolean; json?: boolean }) =>
      run({ journals, recordDir: flags.recordDir, dryRun: !!flags.dryRun, json: !!flags.json }, deps),
    );
}

/** The folder whose files are copied: --record-dir, else the profile's record-dir, else the config folder. */
function placeOf(dir: string | undefined, configDir: string): RecordPlace {
  if (dir === undefined) return { dir: configDir, configDir };
  return { dir: resolve(dir), shared: ensureSharedDir(resolve(dir)), configDir };
}

/** Each journal named exists and is a file: a typo never reads as "nothing to copy". */
function checkJournals(journals: string[]): void {
  for (const path of journals) {
    const hint = 'Name the journal beside the input file a batch ran on: FILE.journal.jsonl.';
    if (!existsSync(path)) throw new UsageError(`${path}: no such journal.`, hint);
    if (!statSync(path).isFile()) throw new UsageError(`${path} is not a file.`, hint);
  }
}

interface Copied {
  kind: ImportSource['kind'];
  path: string;
  lines: number;
  held: ImportSource['held'];
  added: Omit<ImportCounts, 'alreadyIn'>;
}

/** Reads every file, then copies each in its own transaction (rolled back with --dry-run), and says what it added. */
export async function run(opts: ImportOptions, deps: Deps): Promise<void> {
  // A value no one typed on purpose is named before anything else is asked.
  checkText('--record-dir', opts.recordDir, 'Give the folder that holds the record: opcli record import --record-dir DIR.');
  const profile = await deps.profile();
  if (!profile.record && opts.journals.length === 0) {
    throw new UsageError(
      `Profile "${profile.name}" has no record-url: there is no database to import into.`,
      'Set the database your administrator gave you first: `opcli config set record-url postgresql://YOU@HOST/DATABASE` (docs/guides/team-record.md); or name the batch journals to read into the record of claims here.',
    );
  }
  checkJournals(opts.journals);
  const { readImportSources, journalsIntoRecord } = await import('../../record-pg/import-files.js');
  const { serviceOrigin } = await import('../../claims/journal.js');
  const ctx = {
    service: { origin: serviceOrigin(profile.baseUrl), storeId: profile.storeId ?? null, profile: profile.name },
    scope: issuanceKey({ orderNumber: '', bonus: true }, { shopUrl: profile.provider.shopUrl, storeId: profile.storeId }).replace(/\|bonus:$/, ''),
    notice: (text: string) => deps.err(safeText(text)),
  };
  if (!profile.record) {
    // No database: the journals go into this computer's record of claims, as a batch run reads them.
    const { recordPlace } = await import('../../config/record-dir.js');
    const place = opts.recordDir === undefined ? recordPlace(deps.configDir(), profile) : placeOf(opts.recordDir, deps.configDir());
    return reportFile(opts, deps, await journalsIntoRecord(place, opts.journals, ctx, opts.dryRun));
  }
  const place = placeOf(opts.recordDir ?? profile.recordDir, deps.configDir());
  const sources = await readImportSources(place, opts.journals, ctx);
  const { openRecordDatabase } = await import('../../record-pg/database.js');
  const { importRecord } = await import('../../record-pg/import.js');
  const database = await openRecordDatabase(profile.record, { env: deps.env, cwd: deps.cwd, passwordSource: profile.record.passwordSource }, { max: 1 });
  const copied: Copied[] = [];
  try {
    for (const s of sources) {
      const counts = await database.withClient(
        (client) =>
          importRecord(
            client,
            s.file,
            async function* () {
              yield* s.chunks;
            },
            { dryRun: opts.dryRun },
          ),
        `${copied.length ? `the files before ${s.file.path} are in; ` : ''}each file is one transaction: rerunning the import is safe`,
      );
      const { alreadyIn: _in, ...added } = counts;
      copied.push({ kind: s.kind, path: s.file.path, lines: s.file.lines, held: s.held, added });
    }
  } finally {
    await database.close();
  }
  report(opts, deps, database.target, copied);
}

/** What was copied, as text or JSON. */
function report(opts: ImportOptions, deps: Deps, target: { label: string; host: string; port: number; database: string }, copied: Copied[]): void {
  if (opts.json) {
    printJson(deps, { database: { host: target.host, port: target.port, database: target.database }, dryRun: opts.dryRun, files: copied });
    return;
  }
  const verb = opts.dryRun ? 'would add' : 'added';
  if (copied.length === 0) {
    deps.err(`Nothing to copy: no record of claims, gift card ledger or journal with a line in it was found.\n`);
    return;
  }
  deps.out(`${opts.dryRun ? 'Dry run (nothing written): into' : 'Into'} the record database ${target.label}:\n`);
  for (const c of copied) {
    const what = c.kind === 'gift card ledger' ? ['credits', 'outcomes', 'notes'] : ['claims', 'outcomes', 'notes'];
    const n = [c.added.intents, c.added.outcomes, c.added.notes];
    const runs = c.kind === 'claims record' ? `${c.added.runs} runs, ` : '';
    const none = c.added.runs + c.added.intents + c.added.outcomes + c.added.notes === 0;
    deps.out(
      `  ${c.kind} ${safeLine(c.path)}: ${none ? `nothing new (its ${c.held.intents} ${what[0]} are in already)` : `${verb} ${runs}${what.map((w, i) => `${n[i]} ${w}`).join(', ')}`}\n`,
    );
  }
  if (opts.dryRun) deps.err('Nothing was written: run the same command without --dry-run to copy it.\n');
}

/** What reading journals into the record of claims of this computer did, as text or JSON. */
function reportFile(opts: ImportOptions, deps: Deps, done: { record: string; taken: { path: string; held: number; added: number }[] }): void {
  if (opts.json) {
    const files = done.taken.map((t) => ({ kind: 'journal', path: t.path, held: { claims: t.held }, added: { claims: t.added } }));
    printJson(deps, { record: done.record, dryRun: opts.dryRun, files });
    return;
  }
  deps.out(`${opts.dryRun ? 'Dry run (nothing written): into' : 'Into'} the record of claims ${safeLine(done.record)}:\n`);
  for (const t of done.taken) {
    const what = t.added ? `${opts.dryRun ? 'would add' : 'added'} ${t.added} of its ${t.held} claims` : `nothing new (its ${t.held} claims are in already)`;
    deps.out(`  journal ${safeLine(t.path)}: ${what}\n`);
  }
  if (opts.dryRun) deps.err('Nothing was written: run the same command without --dry-run to copy it.\n');
}
