/** How `claims file --from` shows a batch on this terminal: the report, the summary, notices on stderr. */
import type { BatchView } from '../../claims/results.js';
import type { Deps } from '../../cli/deps.js';
import { BatchReporter } from './batch-report.js';
import { summarize } from './batch-summary.js';

/** The display's modes: `--json` (a summary object on stdout, no status line) or `--jsonl` (a line per row, the summary last). */
export interface ViewModes {
  json: boolean;
  jsonl: boolean;
  /** `--jsonl FIELDS`: the fields of each row's result line. */
  fields?: string[];
}

/** The batch's view over the command's streams. */
export function batchView(deps: Deps, modes: ViewModes): BatchView {
  return {
    report: (source, options, progress) => new BatchReporter(deps, source, { ...options, ...modes }, progress),
    summarize: (summary) => summarize(summary, deps, modes),
    notice: (text) => deps.err(text),
  };
}
