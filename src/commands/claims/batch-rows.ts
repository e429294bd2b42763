/** The listing of a batch's rows not filed (the counts by outcome are the batch's: results.ts BatchTally). */
import type { RowResult } from '../../claims/results.js';
import { safeLine } from '../../text/safe.js';

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
