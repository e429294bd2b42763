import type { Deps } from './deps.js';
import { ExitCode, exitCodeFor, InterruptedError, OpcliError, PlainExit, ValidationError } from './errors.js';
import { colors } from './output.js';

/** Prints an error the way the user should see it, on stderr, and returns its exit code. */
export async function reportError(error: unknown, deps: Deps): Promise<number> {
  if (error instanceof PlainExit) {
    if (error.message) deps.err(`${error.message}\n`);
    return error.exitCode;
  }
  const chalk = await colors(deps, 'stderr');
  if (isAbort(error, deps)) {
    // "Cancelled." for Ctrl-C at a question, "Interrupted." for Ctrl-C during work.
    const words = error instanceof InterruptedError ? error.message : error instanceof Error && error.name === 'ExitPromptError' ? 'Cancelled.' : 'Interrupted.';
    deps.err(`${chalk.yellow(words)}\n`);
    return ExitCode.interrupted;
  }
  if (error instanceof OpcliError) {
    deps.err(`${chalk.red('Error:')} ${error.message}\n`);
    if (error instanceof ValidationError) {
      // Each field once: issues the message already states are not repeated.
      for (const issue of error.issues) if (!error.message.includes(issue.message)) deps.err(`  ${issue.path || '(value)'}: ${issue.message}\n`);
    }
    if (error.hint) deps.err(`${chalk.dim(error.hint)}\n`);
    if (deps.globals.verbose && error.cause instanceof Error) deps.err(`Cause: ${error.cause.stack ?? error.cause.message}\n`);
    return exitCodeFor(error);
  }
  const message = error instanceof Error ? error.message : String(error);
  deps.err(`${chalk.red('Error:')} unexpected failure: ${message}\n`);
  if (deps.globals.verbose && error instanceof Error && error.stack) deps.err(`${error.stack}\n`);
  else deps.err(`${chalk.dim('Run again with --verbose for details.')}\n`);
  return ExitCode.failed;
}

function isAbort(error: unknown, deps: Deps): boolean {
  if (error instanceof InterruptedError) return true;
  // A prompt that did not go through the prompter (src/prompter.ts maps these): still Ctrl-C.
  if (error instanceof Error && error.name === 'ExitPromptError') return true;
  if (!deps.signal.aborted) return false;
  return error === deps.signal.reason || (error instanceof Error && error.name === 'AbortError');
}
