/** Typed errors, and the exit codes the README documents (`exitCodeFor`). */
export const ExitCode = {
  ok: 0,
  failed: 1,
  /** A confirmation answered no: nothing was done. Not 130, which is Ctrl-C (docs/exit-codes.md). */
  declined: 1,
  usage: 2,
  partial: 3,
  auth: 4,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Base of every error opcli expects: a message, what to try next, and an exit code. */
export class OpcliError extends Error {
  readonly exitCode: ExitCode;
  /** What the user can do next, printed under the message. */
  readonly hint?: string;
  /** Machine-readable fields added to the --json error object after message, hint and exitCode (status, issues, ...). */
  readonly details?: Record<string, unknown>;

  constructor(message: string, options: { exitCode?: ExitCode; hint?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.exitCode = options.exitCode ?? ExitCode.failed;
    this.hint = options.hint;
    this.details = options.details;
  }
}

/** A wrong flag, a missing argument, a prompt that cannot be shown: exit 2. */
export class UsageError extends OpcliError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.usage, hint });
  }
}

/** Input that does not match what the API accepts (field path and expectation in `issues`): exit 2. */
export class ValidationError extends OpcliError {
  readonly issues: { path: string; message: string }[];
  constructor(message: string, issues: { path: string; message: string }[], hint?: string) {
    super(message, { exitCode: ExitCode.usage, hint, details: { issues } });
    this.issues = issues;
  }
}

/** Not logged in, a token refused, a refresh that failed: exit 4. */
export class AuthError extends OpcliError {
  constructor(message: string, hint = 'Run `opcli auth login` to log in again.', cause?: unknown) {
    super(message, { exitCode: ExitCode.auth, hint, cause });
  }
}

/** Some rows of a batch were rejected or are uncertain: exit 3. */
export class PartialFailureError extends OpcliError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.partial, hint });
  }
}

/** An end told in plain words (a declined confirmation): the sentence printed as it is, no error styling, and `exitCode`. */
export class PlainExit extends OpcliError {
  constructor(message: string, exitCode: ExitCode) {
    super(message, { exitCode });
  }
}

/** Ctrl-C: exit 130. */
export class InterruptedError extends OpcliError {
  constructor(message = 'Interrupted.') {
    super(message, { exitCode: ExitCode.interrupted });
  }
}

interface ApiErrorInit {
  status: number;
  method: string;
  url: string;
  body: unknown;
  message: string;
  code?: string;
  hint?: string;
  exitCode?: ExitCode;
  fieldErrors?: { path: string; message: string }[];
  headers?: Record<string, string>;
  notProcessed?: boolean;
}

/** The server answered with an error status. */
export class ApiError extends OpcliError {
  readonly status: number;
  readonly method: string;
  readonly url: string;
  /** The parsed error body (JSON), or the raw text. */
  readonly body: unknown;
  /** OAuth `error` code when the body carries one (invalid_grant, invalid_token, ...). */
  readonly code?: string;
  readonly fieldErrors: { path: string; message: string }[];
  /** Response headers (lower-case names), e.g. retry-after on a 429. */
  readonly headers: Record<string, string>;
  /** A POST answered with a status the server guarantees it did not process (421, the profile's `not-processed-statuses`). */
  readonly notProcessed: boolean;

  constructor(init: ApiErrorInit) {
    super(init.message, {
      exitCode: init.exitCode ?? ExitCode.failed,
      hint: init.hint,
      details: { status: init.status, code: init.code, fieldErrors: init.fieldErrors },
    });
    this.status = init.status;
    this.method = init.method;
    this.url = init.url;
    this.body = init.body;
    this.code = init.code;
    this.fieldErrors = init.fieldErrors ?? [];
    this.headers = init.headers ?? {};
    this.notProcessed = init.notProcessed ?? false;
  }
}

/**
 * A 3xx answer: opcli never follows a redirect (the bearer token must not travel to another host)
 * and never reads one as a body. `uncertain` is true only for a POST or PATCH answered with a status
 * other than 307 or 308: those two ask for the same request elsewhere, so it was not processed.
 */
export class RedirectError extends ApiError {
  readonly location?: string;
  readonly uncertain: boolean;
  constructor(init: ApiErrorInit & { hint: string; location?: string; uncertain: boolean }) {
    super(init);
    this.location = init.location;
    this.uncertain = init.uncertain;
    Object.assign(this.details as object, { location: init.location ?? null });
  }
}

/** A network failure; `sent` is false only when it is proven that the request never reached the server. */
export class NetworkError extends OpcliError {
  readonly sent: boolean;
  readonly errorCode?: string;
  constructor(message: string, options: { sent: boolean; errorCode?: string; cause?: unknown; hint?: string }) {
    super(message, { hint: options.hint ?? 'Check the base URL and your connection, then try again.', cause: options.cause });
    this.sent = options.sent;
    this.errorCode = options.errorCode;
  }
}

/** No answer in time. The request may have reached the server. */
export class TimeoutError extends NetworkError {
  constructor(message: string, cause?: unknown, options: { hint?: string; errorCode?: string } = {}) {
    super(message, {
      sent: true,
      errorCode: options.errorCode ?? 'ETIMEDOUT',
      cause,
      hint: options.hint ?? 'The server did not answer in time; raise OPCLI_HTTP_TIMEOUT or try again.',
    });
  }
}

export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof OpcliError) return error.exitCode;
  return ExitCode.failed;
}

/** Whether a failed POST may have taken effect (a timeout, a connection lost after sending, a 5xx, a redirect but 307/308): never resent on its own. */
export function isOutcomeUncertain(error: unknown): boolean {
  if (error instanceof NetworkError) return error.sent;
  if (error instanceof RedirectError) return error.uncertain;
  if (error instanceof ApiError) return error.status >= 500 && !error.notProcessed;
  return false;
}
