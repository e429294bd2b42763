/** How `claims file --from` shows a batch on this terminal: the report, the summary, notices on stderr. */
import type { BatchView } from '../../claims/results.js';
import type { Deps } from '../../deps.js';
import { BatchReporter } from './batch-report.js';
import { summarize } from './batch-summary.js';

/** The batch's view over the command's streams; `fields` (`--jsonl FIELDS`) selects the fields of each row's result line. */
export function batchView(deps: Deps, output: { fields?: string[] } = {}): BatchView {
  return {
    report: (source, options) => new BatchReporter(deps, source, { ...options, fields: output.fields }),
    summarize: (report, journalPath, earlierUncertain, earlierUncertainCount, opts, inFlight) =>
      summarize(report, deps, journalPath, earlierUncertain, earlierUncertainCount, opts, inFlight),
    notice: (text) => deps.err(text),
  };
}
