/** Per-row bookkeeping of a batch's report: the counts by outcome, and the listing of rows not filed. */
import type { Counts, RowResult, RowStatus } from '../../claims/results.js';
import { safeLine } from '../../text/safe.js';

export function emptyCounts(): Counts {
  return {
    filed: 0,
    filedEarlier: 0,
    rejected: 0,
    rejectedEarlier: 0,
    invalid: 0,
    held: 0,
    uncertain: 0,
    uncertainEarlier: 0,
    notSent: 0,
    valid: 0,
    sent: 0,
    done: 0,
  };
}

/** The count each outcome adds to: now, or (outcomes an earlier run recorded) earlier. */
const COUNTED: Record<RowStatus, [now: keyof Counts, earlier?: keyof Counts]> = {
  filed: ['filed', 'filedEarlier'],
  rejected: ['rejected', 'rejectedEarlier'],
  uncertain: ['uncertain', 'uncertainEarlier'],
  invalid: ['invalid'],
  held: ['held'],
  not_sent: ['notSent'],
  valid: ['valid'],
};

/** Counts one row's outcome. */
export function countRow(c: Counts, result: RowResult): void {
  c.done++;
  const [now, earlier] = COUNTED[result.status];
  c[result.earlier && earlier ? earlier : now]++;
}

/**
 * A row that did not get filed (held, invalid, rejected, uncertain, not sent), for stderr: its line,
 * field paths and expectations; user and server text made safe. `dryRun`: what a real run would do
 * with it ("would be held", "would be refused").
 */
export function problemText(result: RowResult, unit: 'line' | 'item', dryRun = false): string {
  const where = `${unit} ${result.line}`;
  if (result.status === 'held') return `${where}: ${dryRun ? 'would be held: ' : ''}${safeLine(result.error ?? '')}\n`;
  if (result.errors?.length) {
    const invalid = dryRun ? `${where}: would be refused: invalid, not sent` : `${where}: invalid, not sent`;
    const head = result.status === 'invalid' ? invalid : `${where}: ${result.status}: ${safeLine(result.error ?? '')}`;
    return `${head}\n${result.errors.map((e) => `  ${safeLine(e.path || '(row)')}: ${safeLine(e.message)}`).join('\n')}\n`;
  }
  return `${where}: ${result.status.replace('_', ' ')}: ${safeLine(result.error ?? '')}\n`;
}
