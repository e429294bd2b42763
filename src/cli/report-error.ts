import type { Deps } from './deps.js';
import { ExitCode, exitCodeFor, InterruptedError, OpcliError, PlainExit, ValidationError } from '../core/errors.js';
import { colors, terminalWidth } from '../core/output.js';
import { count } from '../text/count.js';
import { excerpt } from '../text/excerpt.js';
import { safeText } from '../text/safe.js';
import { wrapText } from '../text/wrap.js';

export interface ReportOptions {
  /** --json was given: the error is one JSON object on stderr, `{"error":{"message","hint","exitCode",...}}`. */
  json?: boolean;
}

// A readable length, whatever the error quotes (messages that quote input cut it themselves: src/text/excerpt.ts).
const MAX_MESSAGE = 2000;
const MAX_ISSUE = 500;
const MAX_ISSUES = 50;

/** Prints an error on stderr, through safeText (server text cannot drive the terminal), and returns its exit code. */
export async function reportError(error: unknown, deps: Deps, options: ReportOptions = {}): Promise<number> {
  if (error instanceof PlainExit) {
    // A sentence that is not an error ("Nothing was issued.", a double-credit warning): no prefix, no
    // styling, and under --json too (stdout holds the JSON result).
    if (error.message) deps.err(`${error.message}\n`);
    return error.exitCode;
  }
  const aborted = isAbort(error, deps);
  const code = aborted ? ExitCode.interrupted : exitCodeFor(error);
  if (options.json) {
    deps.err(`${JSON.stringify({ error: errorObject(error, code, aborted, deps) })}\n`);
    return code;
  }
  const chalk = await colors(deps, 'stderr');
  const wrap = (text: string) => (deps.io.stderrIsTTY ? wrapText(text, terminalWidth(deps, 'stderr')) : text);
  if (aborted) {
    deps.err(`${chalk.yellow(abortWords(error))}\n`);
    return ExitCode.interrupted;
  }
  if (error instanceof OpcliError) {
    deps.err(`${wrap(`${chalk.red('Error:')} ${safeText(excerpt(error.message, MAX_MESSAGE))}`)}\n`);
    if (error instanceof ValidationError) {
      // Each field once: issues the message already states are not repeated.
      const issues = error.issues.filter((issue) => !error.message.includes(issue.message));
      for (const issue of issues.slice(0, MAX_ISSUES))
        deps.err(`  ${safeText(excerpt(issue.path || '(value)', MAX_ISSUE))}: ${safeText(excerpt(issue.message, MAX_ISSUE))}\n`);
      if (issues.length > MAX_ISSUES) deps.err(`  … and ${count(issues.length - MAX_ISSUES)} more\n`);
    }
    if (error.hint) deps.err(`${chalk.dim(wrap(safeText(excerpt(error.hint, MAX_MESSAGE))))}\n`);
    if (deps.globals.verbose && error.cause instanceof Error) deps.err(`Cause: ${safeText(error.cause.stack ?? error.cause.message)}\n`);
    return code;
  }
  const message = error instanceof Error ? error.message : String(error);
  deps.err(`${chalk.red('Error:')} unexpected failure: ${safeText(excerpt(message, MAX_MESSAGE))}\n`);
  if (deps.globals.verbose && error instanceof Error && error.stack) deps.err(`${safeText(error.stack)}\n`);
  else deps.err(`${chalk.dim('Run again with --verbose for details.')}\n`);
  return code;
}

/** The `error` member of a --json error: message, hint, exitCode, then the error's machine-readable fields. */
function errorObject(error: unknown, exitCode: number, aborted: boolean, deps: Deps): Record<string, unknown> {
  if (aborted) {
    return { message: abortWords(error), hint: null, exitCode };
  }
  if (error instanceof OpcliError) {
    return { message: error.message, hint: error.hint ?? null, exitCode, ...(error.details ?? {}) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message: `unexpected failure: ${message}`, hint: deps.globals.verbose ? null : 'Run again with --verbose for details.', exitCode };
}

/** "Cancelled." for Ctrl-C at a question, "Interrupted." (or the error's own words) for Ctrl-C during work. */
function abortWords(error: unknown): string {
  if (error instanceof InterruptedError) return error.message;
  return error instanceof Error && error.name === 'ExitPromptError' ? 'Cancelled.' : 'Interrupted.';
}

function isAbort(error: unknown, deps: Deps): boolean {
  if (error instanceof InterruptedError) return true;
  // A prompt that did not go through the prompter (src/core/prompter.ts maps these): still Ctrl-C.
  if (error instanceof Error && error.name === 'ExitPromptError') return true;
  if (!deps.signal.aborted) return false;
  return error === deps.signal.reason || (error instanceof Error && error.name === 'AbortError');
}
