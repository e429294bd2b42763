import type { Deps } from '../../cli/deps.js';
import type { ReceivedRequest, Sandbox, SandboxOptions } from '../../sandbox/types.js';

/** Runs opcli with `argv` and returns the exit code: cli.ts's runCli, given to the demo when its group loads. */
export type RunCli = (argv: string[], deps: Deps) => Promise<number>;

/** What a tour step gets: the sandbox, a way to run opcli commands visibly, and the tour's deps. */
export interface TourContext {
  sandbox: Sandbox;
  deps: Deps;
  /** The temporary config folder the tour uses. */
  configDir: string;
  /** Prints `$ opcli <argv>` and runs it in-process against the sandbox; returns its captured output. */
  run(argv: string[], options?: { stdin?: string; expectCode?: number }): Promise<{ code: number; stdout: string; stderr: string }>;
  /** A line of narration on stderr. */
  say(text: string): void;
}

/** One step of the guided tour. */
export interface TourStep {
  title: string;
  run(ctx: TourContext): Promise<void>;
}

/** Starts the tour's sandbox: the sandbox's own `startSandbox`, or a test's, which keeps it to read what it received. */
export type StartSandbox = (options: SandboxOptions) => Promise<Sandbox>;

/**
 * One command the tour ran: in which step, the exit code it was meant to end with and the one it
 * did, what it printed and the requests the sandbox received while it ran.
 */
export interface TourCommand {
  step: string;
  argv: string[];
  expected: number;
  code: number;
  stdout: string;
  stderr: string;
  received: ReceivedRequest[];
}
