/** `opcli orders update`: its flags, the run, and what it shows (the dry run with its per-field diff, the one-line summary). */
import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { checkText, parseWholeNumber } from '../../core/flags.js';
import { fieldKinds, fieldsFromFlags } from '../../input/flags.js';
import { Order } from '../../schemas.js';
import { addBodyVerb, printAnswer } from '../body-verb.js';
import { PATHS } from '../../api/service.js';
import { readDataObject } from '../../input/data.js';
import { type FieldChange, planUpdate, sendUpdate, type UpdatePlan } from '../../orders/update.js';
import { safeLine, safeText } from '../../text/safe.js';
import { createProgress } from '../../text/progress.js';
import { count } from '../../text/count.js';

export interface UpdateOptions {
  sourceOrderId: string;
  /** A JSON file, or - for standard input; flags override its fields. */
  data?: string;
  /** Field values as the flags gave them (strings until validated). */
  flags: Record<string, unknown>;
  /** Send exactly the given fields instead of merging them into the current record. */
  replace: boolean;
  pageSize?: number;
  dryRun: boolean;
  json: boolean;
}

let kinds: ReturnType<typeof fieldKinds> | undefined;
/** The field flags, derived from the Order schema on first use (not when `orders list` loads this module). */
const orderKinds = () => {
  kinds ??= fieldKinds(Order);
  return kinds;
};

export function register(group: Command, deps: Deps): void {
  addBodyVerb(group, {
    name: 'update',
    description: 'Change fields of an order, keeping every field not given (PUT /v1/orders/{sourceOrderId})',
    argument: ['<sourceOrderId>', 'the order to update'],
    holds: 'order fields',
    kinds: orderKinds(),
    options: (cmd) =>
      cmd
        .option('--replace', 'send exactly the fields given, erasing every other field (no lookup of the current record)')
        .option('--page-size <n>', 'orders per page while looking for the current record (default 100)', (v: string) =>
          parseWholeNumber(v, '--page-size', { min: 1 }),
        ),
    dryRun: 'show the request and a per-field diff (kept, changed, added, cleared); send nothing',
    json: 'print the answer (or the dry run) as JSON',
  })
    .addHelpText(
      'after',
      `
The API replaces the whole order on every update. So by default opcli finds the current record
(through the order list: the API has no single-order read), lays the given fields over it and sends
the whole record: fields you do not give are kept. An order the list does not show is not updated
unless you add --replace, which sends exactly the fields given (sourceOrderNumber and currency are
then required) and erases every other field. Date-times are ISO 8601 with a time zone;
--policy-cancelled-at null clears the cancellation.

Examples:
  $ opcli orders update ord_000001 --total 42.50 --dry-run
  $ opcli orders update ord_000001 --currency AUD --total 190
  $ opcli orders update ord_000001 --data order.json --policy-cancelled-at 2024-05-01T12:00:00Z
  $ jq '.currency = "EUR"' order.json | opcli orders update ord_000001 --data - --replace`,
    )
    .action(async (sourceOrderId: string, flags: Record<string, unknown>) => {
      // `.` and `..` are refused where the path is built (pathSegment in src/api/service.ts).
      checkText('The sourceOrderId argument', sourceOrderId, 'Pass the id of the order, e.g. ord_000001.');
      const { data, dryRun, json, replace, pageSize, ...fields } = flags as {
        data?: string;
        dryRun?: boolean;
        json?: boolean;
        replace?: boolean;
        pageSize?: number;
      } & Record<string, unknown>;
      await run({ sourceOrderId, data, flags: fields, replace: !!replace, pageSize, dryRun: !!dryRun, json: !!json }, deps);
    });
}

/** Plans (reads, merges, validates) and sends, or with --dry-run shows, the order update. */
export async function run(opts: UpdateOptions, deps: Deps): Promise<void> {
  // The id must be usable in the URL before the store is paged through for it.
  const path = PATHS.order(opts.sourceOrderId);
  const base = opts.data !== undefined ? await readDataObject(deps, opts.data) : {};
  const { fields, issues } = fieldsFromFlags(opts.flags, orderKinds());
  const progress = createProgress(deps);
  let plan: Awaited<ReturnType<typeof planUpdate>>;
  try {
    plan = await planUpdate(deps, {
      sourceOrderId: opts.sourceOrderId,
      given: { ...base, ...fields },
      flagIssues: issues,
      replace: opts.replace,
      lookup: !opts.replace || opts.dryRun,
      pageSize: opts.pageSize,
      onProgress: (p) =>
        progress.update(() => `Looking for ${opts.sourceOrderId}: ${count(p.checked)}${p.total !== undefined ? ` of ${count(p.total)}` : ''} orders checked`),
      onNotice: (text) => deps.err(text),
    });
  } finally {
    progress.done();
  }
  if (opts.dryRun) {
    printUpdateDryRun(deps, { method: 'PUT', path, plan, replace: opts.replace, json: opts.json });
    return;
  }
  const answer = await sendUpdate(deps, opts.sourceOrderId, plan.body);
  await printAnswer(deps, opts.json, answer, `Order ${opts.sourceOrderId} updated${summary(plan)}.`);
}

function show(value: unknown): string {
  if (value === undefined) return '(none)';
  if (value === null) return 'null';
  return safeLine(typeof value === 'string' ? JSON.stringify(value) : String(value));
}

/** One line per field: `changed  total  120 → 190`. */
function diffLines(diff: FieldChange[]): string[] {
  const width = Math.max(0, ...diff.map((d) => d.field.length));
  return diff.map((d) => {
    const head = `  ${d.change.padEnd(7)}  ${d.field.padEnd(width)}  `;
    if (d.change === 'kept') return `${head}${show(d.after)}`;
    if (d.change === 'added') return `${head}${show(d.after)}`;
    return `${head}${show(d.before)} → ${show(d.after)}`;
  });
}

/** ", 2 fields changed, 12 kept" after "Order X updated". */
function summary(plan: UpdatePlan): string {
  if (!plan.diff) return ' (sent as given, --replace)';
  const n = (kind: FieldChange['change']) => plan.diff?.filter((d) => d.change === kind).length ?? 0;
  const parts = [`${n('changed') + n('added')} field${n('changed') + n('added') === 1 ? '' : 's'} changed`, `${n('kept')} kept`];
  if (n('cleared')) parts.push(`${n('cleared')} cleared`);
  return `: ${parts.join(', ')}`;
}

/** Prints the request that would be sent and how it changes the record; nothing is sent. */
function printUpdateDryRun(deps: Deps, input: { method: string; path: string; plan: UpdatePlan; replace: boolean; json: boolean }): void {
  const { method, path, plan } = input;
  if (input.json) {
    deps.out(
      `${JSON.stringify({ method, path, body: plan.body, ...(plan.diff ? { diff: plan.diff } : {}), ...(plan.ignored.length ? { notSent: plan.ignored } : {}) }, null, 2)}\n`,
    );
  } else {
    let text = `${method} ${path}\nContent-Type: application/json\n\n${JSON.stringify(plan.body, null, 2)}\n`;
    if (plan.diff) text += `\nChanges to the current record:\n${diffLines(plan.diff).join('\n')}\n`;
    else text += '\nThe current record was not found in the list, so there is nothing to compare with.\n';
    // The record came from the server: JSON.stringify leaves DEL and C1 characters raw.
    deps.out(safeText(text));
  }
  const cleared = plan.diff?.filter((d) => d.change === 'cleared').map((d) => d.field) ?? [];
  if (cleared.length) deps.err(`Warning: this update clears ${cleared.join(', ')}.\n`);
  if (plan.ignored.length) deps.err(`Not sent (not fields of the update body): ${plan.ignored.map(safeLine).join(', ')}.\n`);
  deps.err('Dry run: nothing was sent.\n');
}
