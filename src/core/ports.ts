/** The shapes of the outside world that modules below src/cli/deps.ts take; imports nothing of opcli's (no circle). */
import type { Readable, Writable } from 'node:stream';

/** The three streams with what is known about them. stderr output is always redacted. */
export interface IO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** Colour on stdout (a TTY, and neither NO_COLOR nor --no-color). */
  colorStdout: boolean;
  /** Colour on stderr. */
  colorStderr: boolean;
}

/** Options that apply to every command. */
export interface Globals {
  profile?: string;
  verbose: boolean;
  /** False with --no-input: never prompt. */
  input: boolean;
  /** --progress, else OPCLI_PROGRESS, else the `progress` setting (default auto: src/text/progress.ts). */
  progress?: ProgressMode;
  /** The accessible mode (OPCLI_ACCESSIBLE, else the `accessible` setting): nothing redrawn, choices as numbered lists. */
  accessible: boolean;
}

/** A question asked on the terminal; tests inject their own answers. */
export interface Prompter {
  /** `signal` withdraws the question (the prompt rejects), e.g. when the login callback arrived first. */
  input(options: {
    message: string;
    default?: string;
    validate?: (value: string) => true | string;
    signal?: AbortSignal /** Remove the question and the answer from the screen once answered (the answer is secret). */;
    secret?: boolean;
  }): Promise<string>;
  password(options: { message: string; validate?: (value: string) => true | string }): Promise<string>;
  confirm(options: { message: string; default?: boolean }): Promise<boolean>;
  select<T extends string>(options: { message: string; choices: { name: string; value: T; description?: string }[]; default?: T }): Promise<T>;
}

/** What the progress layer reads of the run: the display options, stderr, COLUMNS and the clock. */
export interface DisplayPorts {
  globals: Globals;
  io: IO;
  env: Record<string, string | undefined>;
  now(): number;
}

/** What printing reads and writes of the run (src/core/output.ts): the streams, COLUMNS and TERM, stdout and stderr. */
export interface Printer {
  io: IO;
  env: Record<string, string | undefined>;
  /** Writes data to stdout. */
  out(text: string): void;
  /** Writes a notice to stderr, redacted. */
  err(text: string): void;
}

/** The values of `--progress` and of the `progress` setting (src/text/progress.ts draws them); a leaf module, so the settings schema can take them. */
export const PROGRESS_MODES = ['auto', 'plain', 'none'] as const;
export type ProgressMode = (typeof PROGRESS_MODES)[number];
