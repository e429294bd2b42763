/** The summary a batch prints at its end (or at a second Ctrl-C): counts, earlier outcomes, uncertain rows. */
import type { BatchSummary } from '../../claims/results.js';
import { CHECK_UNCERTAIN_ROWS } from '../../core/claim-check.js';
import type { Deps } from '../../cli/deps.js';
import { count, counted } from '../../text/count.js';

/**
 * Prints the summary on stderr (and the counts on stdout: with --json as one object, with --jsonl as
 * the last line, `{"summary": {…}}`). `inFlight`: rows whose request had no answer when stopped.
 */
export function summarize(summary: BatchSummary, deps: Deps, opts: { json: boolean; jsonl?: boolean }): void {
  const { counts: c, limits, inFlight, journal: journalPath } = summary;
  const earlierUncertain = summary.earlierUncertain.lines;
  const earlierUncertainCount = summary.earlierUncertain.count;
  const seconds = summary.elapsedMs / 1000;
  // Rows and requests differ: a row refused with 429 is asked again (one row, several requests).
  const requests = limits?.answered ?? c.sent;
  const refused = limits?.refused ?? 0;
  // The rate the server allows as learnt (or --rate): what the limiter paced at when the batch ended.
  const learnt = limits?.learnt !== undefined ? Math.round(limits.learnt * 10) / 10 : null;
  if (opts.json || opts.jsonl) {
    const summary = {
      rows: c.done,
      filed: c.filed,
      rejected: c.rejected,
      invalid: c.invalid,
      held: c.held,
      uncertain: c.uncertain + inFlight.length,
      notSent: c.notSent,
      earlier: { filed: c.filedEarlier, rejected: c.rejectedEarlier, uncertain: c.uncertainEarlier },
      sent: c.sent,
      requests,
      rateLimited: refused,
      learntRate: learnt,
      seconds: Math.round(seconds * 1000) / 1000,
      rowsPerSecond: seconds > 0 ? Math.round((c.done / seconds) * 10) / 10 : 0,
      journal: journalPath,
    };
    deps.out(opts.jsonl ? `${JSON.stringify({ summary })}\n` : `${JSON.stringify(summary, null, 2)}\n`);
  }
  const rate = seconds > 0 ? c.done / seconds : 0;
  const pace = learnt !== null ? `; paced at ${learnt >= 10 ? Math.round(learnt) : learnt}/s, the rate the server allows as learnt` : '';
  const traffic = `${counted(requests, 'request')}${refused ? `, ${count(refused)} of them answered 429 or 503 (over the server's limit)` : ''}${pace}`;
  const lines = [
    `Filed ${counted(c.filed, 'claim')}; ${count(c.rejected)} rejected by the API, ${count(c.invalid)} invalid (not sent), ${count(c.uncertain + inFlight.length)} uncertain${c.held ? `, ${count(c.held)} held (not sent)` : ''}${c.notSent ? `, ${count(c.notSent)} not sent` : ''} (${c.done === 0 ? 'no rows' : counted(c.done, 'row')} in ${seconds.toFixed(1)}s, ${rate.toFixed(0)} rows/s; ${traffic}).`,
  ];
  if (c.filedEarlier + c.rejectedEarlier + c.uncertainEarlier > 0) {
    lines.push(
      `Settled by an earlier run, not sent again: ${count(c.filedEarlier)} filed, ${count(c.rejectedEarlier)} rejected, ${count(c.uncertainEarlier)} uncertain.`,
    );
  }
  if (earlierUncertainCount > 0) {
    lines.push(
      `Uncertain from an earlier run (sent, answer never read): ${summary.unit}${earlierUncertainCount === 1 ? '' : 's'} ${earlierUncertain.join(', ')}${earlierUncertainCount > earlierUncertain.length ? ` and ${count(earlierUncertainCount - earlierUncertain.length)} more` : ''}.`,
    );
  }
  if (inFlight.length)
    lines.push(`Uncertain (in flight when stopped; the claims may exist): ${summary.unit}${inFlight.length === 1 ? '' : 's'} ${inFlight.join(', ')}.`);
  if (c.uncertain + c.uncertainEarlier + inFlight.length > 0) {
    lines.push(
      `Uncertain means the request was sent but its answer was lost: the claim may exist, and opcli does not resend it on its own. ${CHECK_UNCERTAIN_ROWS}`,
    );
  }
  lines.push(`Journal: ${journalPath}`);
  deps.err(`${lines.join('\n')}\n`);
}
