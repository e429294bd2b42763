/** What `orders update` shows: the dry run with its per-field diff, and the one-line summary. */
import type { Deps } from '../../cli/deps.js';
import { safeLine, safeText } from '../../text/safe.js';
import type { FieldChange, UpdatePlan } from '../../orders/update.js';

function show(value: unknown): string {
  if (value === undefined) return '(none)';
  if (value === null) return 'null';
  return safeLine(typeof value === 'string' ? JSON.stringify(value) : String(value));
}

/** One line per field: `changed  total  120 → 190`. */
export function diffLines(diff: FieldChange[]): string[] {
  const width = Math.max(0, ...diff.map((d) => d.field.length));
  return diff.map((d) => {
    const head = `  ${d.change.padEnd(7)}  ${d.field.padEnd(width)}  `;
    if (d.change === 'kept') return `${head}${show(d.after)}`;
    if (d.change === 'added') return `${head}${show(d.after)}`;
    return `${head}${show(d.before)} → ${show(d.after)}`;
  });
}

/** ", 2 fields changed, 12 kept" after "Order X updated". */
export function summary(plan: UpdatePlan): string {
  if (!plan.diff) return ' (sent as given, --replace)';
  const n = (kind: FieldChange['change']) => plan.diff?.filter((d) => d.change === kind).length ?? 0;
  const parts = [`${n('changed') + n('added')} field${n('changed') + n('added') === 1 ? '' : 's'} changed`, `${n('kept')} kept`];
  if (n('cleared')) parts.push(`${n('cleared')} cleared`);
  return `: ${parts.join(', ')}`;
}

/** Prints the request that would be sent and how it changes the record; nothing is sent. */
export function printUpdateDryRun(deps: Deps, input: { method: string; path: string; plan: UpdatePlan; replace: boolean; json: boolean }): void {
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
