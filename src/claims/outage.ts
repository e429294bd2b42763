/**
 * A batch meeting an outage: answers that say the service is down (connections refused, a
 * gateway's 502, 503 or 504, no answer in time) close a gate in front of the rows not yet sent, so
 * only the rows already in flight (at most --concurrency) meet the outage. Once they are answered,
 * one harmless GET asks whether the service is back: if it is, the batch goes on; if not, it
 * stops (the rows left are not sent, and a rerun sends them), or with `--wait-for-service` it
 * waits, asking again, until the service is back or the wait is over.
 */
import { PATHS } from '../api/service.js';
import { ApiError, ExitCode, NetworkError, OpcliError, RedirectError, TimeoutError } from '../core/errors.js';
import type { HttpClient } from '../http/client.js';
import { count } from '../text/count.js';
import { unreachableFailure } from './send.js';

/** What an answer says about the service: the words of each kind of outage. */
export type OutageCause = 'refused' | 'bad-gateway' | 'unavailable' | 'gateway-timeout' | 'no-answer';

const CAUSES: Record<OutageCause, string> = {
  refused: 'the service refused connections',
  'bad-gateway': 'the gateway in front of the service could not get an answer from it (502 Bad Gateway)',
  unavailable:
    'the service answered that it is unavailable (503); if that is a gateway answering its rate limit with 503, `opcli config set not-processed-statuses 429,503` has them asked again as a 429 is, and never uncertain',
  'gateway-timeout':
    'the gateway in front of the service gave up waiting for it (504 Gateway Timeout): the service was holding requests, and may still process the ones the gateway gave up on',
  'no-answer': 'the service stopped answering (timed out)',
};

/** The kind of outage a failed request shows, or undefined when it shows none (a refused row, a redirect). */
export function outageCause(error: unknown): OutageCause | undefined {
  if (error instanceof RedirectError) return undefined;
  if (error instanceof ApiError) {
    if (error.status === 502) return 'bad-gateway';
    if (error.status === 503) return 'unavailable';
    if (error.status === 504) return 'gateway-timeout';
    return undefined;
  }
  if (error instanceof TimeoutError) return 'no-answer';
  // Connection refused, DNS, a connection closed before the request was written.
  if (error instanceof NetworkError && !error.sent && error.errorCode !== 'UND_ERR_INVALID_ARG') return 'refused';
  return undefined;
}

/** What the probe found: the service answered (whatever the status), or the outage goes on. */
export type ProbeResult = { up: true } | { up: false; cause: OutageCause; detail: string };

export interface OutageOptions {
  /** Asks the service once, with a request safe to repeat (GET /v1/orders?size=1). */
  probe: () => Promise<ProbeResult>;
  /** `--wait-for-service`: how long to wait for the service to come back; undefined stops at once. */
  waitMs?: number;
  /** The time between probes while waiting. */
  probeEveryMs?: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Stops the wait (Ctrl-C). */
  signal: AbortSignal;
  notice: (text: string) => void;
}

/** The batch stopped because the service is down: the rows not sent are sent by a rerun (exit 1). */
export class OutageError extends OpcliError {
  readonly cause_: OutageCause;
  constructor(cause: OutageCause, failures: number, waitedMs: number | undefined) {
    const waited = waitedMs === undefined ? '' : `, and it did not come back within ${Math.round(waitedMs / 1000)} s`;
    super(
      `The service is down (${count(failures)} request${failures === 1 ? '' : 's'} in a row failed${waited}): ${CAUSES[cause]}; opcli stopped sending. Rerunning the same command is safe: it sends the rows not sent and the rows not read yet, never a row filed or uncertain${cause === 'gateway-timeout' ? ' (the service may still create the uncertain ones: look for them in the merchant dashboard before --retry-uncertain, which files again any that exist)' : ''}.`,
      { exitCode: ExitCode.failed },
    );
    this.cause_ = cause;
  }
}

/** The hint every connection failure gets unless it knows better (the line itself says what to do). */
const GENERIC_HINT = new NetworkError('', { sent: false }).hint;

/**
 * The service could not be reached and no claim request of this run reached it: one line, whatever
 * the batch's size (or one claim), since rerunning sends everything (exit 1). A failure that knows
 * more (a proxy that cannot be reached) keeps its hint.
 */
export class UnreachableError extends OpcliError {
  constructor(what: string, failure: NetworkError) {
    super(`${what}: the service cannot be reached (${failure.message.replace(/\.$/, '')}); nothing was sent, rerunning is safe.`, {
      exitCode: ExitCode.failed,
      hint: failure.hint === GENERIC_HINT ? undefined : failure.hint,
      cause: failure,
    });
  }
}

/**
 * Watches a batch's answers for an outage; rows pass `enter()` before they are sent. After the
 * probe finds the service up, one row goes first: only once it is answered do the others follow
 * (a gateway may answer a GET while POSTs still fail), so an outage costs at most the rows that
 * were in flight when it began, and one more per probe that proved wrong.
 */
export class OutageWatch {
  private readonly options: OutageOptions;
  /** Rows past the gate whose outcome is not in. */
  private inFlight = 0;
  /** Outage answers since the last good one. */
  private failures = 0;
  private cause?: OutageCause;
  private closed?: { promise: Promise<void>; open: () => void };
  private deciding = false;
  /** The probe found the service up: one row may pass the closed gate. */
  private admitOne = false;
  /** That row is out, or no row has been answered well since the probe: the probe is not proof yet. */
  private onTrial = false;
  /** When this outage began to be waited for (--wait-for-service counts from here). */
  private waitStarted?: number;
  /** "The service looks down" was said: "it is back" is said too. */
  private announced = false;
  /** Set when the batch must stop: the rows still at the gate are not sent. */
  stopError?: OutageError;
  /** A claim request of this run may have reached the service (an answer, or a failure after it was written). */
  private reached = false;
  /** The first failure that proved the service was not reached. */
  private unreachable?: NetworkError;

  constructor(options: OutageOptions) {
    this.options = options;
  }

  /** True when the row may be sent, false when the batch stops; a promise of that while the gate is closed (an open gate costs no turn). */
  enter(): boolean | Promise<boolean> {
    if (!this.closed && !this.stopError) {
      this.inFlight++;
      return true;
    }
    return this.wait();
  }

  private async wait(): Promise<boolean> {
    for (;;) {
      if (this.stopError) return false;
      if (!this.closed) break;
      if (this.admitOne) {
        this.admitOne = false;
        break;
      }
      await this.closed.promise;
    }
    this.inFlight++;
    return true;
  }

  /** A row that entered is settled: `error` is its failure; `answered` false when it never went (stopped before its turn). */
  leave(error: unknown, answered = true): void {
    this.inFlight--;
    if (answered) this.witness(error);
    const cause = error === undefined ? undefined : outageCause(error);
    if (cause) {
      this.failures++;
      this.cause = cause;
      this.closed ??= gate();
    } else if (answered && (error === undefined || error instanceof ApiError)) {
      // An answer from the service itself. Once the gate is closed, only a row let through after
      // the probe opens it: a row answered well now may have been sent before the failures began.
      if (this.onTrial) {
        this.onTrial = false;
        this.clear();
        if (this.announced) this.options.notice('The service is back; going on.\n');
        this.announced = false;
        this.reopen();
      } else if (!this.closed) this.clear();
    }
    if (this.closed && this.inFlight === 0 && !this.admitOne) void this.decide();
  }

  /** The failure that proved the service unreachable, when no claim request of the run reached it; else undefined. */
  neverReached(): NetworkError | undefined {
    return this.reached ? undefined : this.unreachable;
  }

  /** What a settled request says of the service: reached (any answer, or written before it failed), or not. */
  private witness(error: unknown): void {
    const notReached = unreachableFailure(error);
    if (notReached) this.unreachable ??= notReached;
    else if (!(error instanceof NetworkError && !error.sent)) this.reached = true;
  }

  /** Stops at once (the batch stops for another reason): rows at the gate go on to be settled not sent. */
  release(): void {
    this.admitOne = false;
    this.reopen();
  }

  private clear(): void {
    this.failures = 0;
    this.cause = undefined;
    this.waitStarted = undefined;
  }

  private reopen(): void {
    const closed = this.closed;
    this.closed = undefined;
    closed?.open();
  }

  /** Lets one row through the closed gate (the others wait for its answer). */
  private letOneThrough(): void {
    const old = this.closed;
    this.closed = gate();
    this.admitOne = true;
    this.onTrial = true;
    old?.open();
  }

  /** Every row in flight is answered and the gate is closed: ask the service. */
  private async decide(): Promise<void> {
    if (this.deciding) return;
    this.deciding = true;
    const { waitMs, probeEveryMs = 1_000 } = this.options;
    // The probe said "up" and the row let through failed as the others did: it was not proof.
    const distrust = this.onTrial;
    this.onTrial = false;
    this.waitStarted ??= this.options.now();
    const started = this.waitStarted;
    let up = false;
    try {
      for (let first = true; ; first = false) {
        const found: ProbeResult = first && distrust ? { up: false, cause: this.cause ?? 'bad-gateway', detail: '' } : await this.options.probe();
        if (found.up) {
          up = true;
          return;
        }
        if (waitMs === undefined || this.options.signal.aborted || this.options.now() - started >= waitMs) {
          this.stopError = new OutageError(this.cause ?? found.cause, this.failures, waitMs);
          return;
        }
        if (!this.announced) {
          this.announced = true;
          this.options.notice(
            `The service looks down: ${CAUSES[this.cause ?? found.cause]}. Waiting up to ${Math.round(waitMs / 1000)} s for it (--wait-for-service), asking every ${probeEveryMs / 1000} s.\n`,
          );
        }
        await this.options.sleep(Math.min(probeEveryMs, Math.max(0, waitMs - (this.options.now() - started))), this.options.signal).catch(() => {});
      }
    } finally {
      this.deciding = false;
      if (up && !this.stopError) this.letOneThrough();
      else this.reopen();
    }
  }
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Reads a probe's failure as an outage's cause; an answer from the service (any status but 502-504) means it is up. */
export function probeResult(error: unknown): ProbeResult {
  const cause = outageCause(error);
  if (!cause) {
    if (error instanceof NetworkError) return { up: false, cause: 'no-answer', detail: error.message };
    return { up: true };
  }
  return { up: false, cause, detail: error instanceof Error ? error.message : String(error) };
}

/** Asks the service once, with a request safe to repeat (GET /v1/orders?size=1), whether it answers. */
export async function probeService(http: () => Promise<HttpClient>, signal: AbortSignal): Promise<ProbeResult> {
  try {
    await (await http()).request({ method: 'GET', url: PATHS.orders, query: { size: 1 }, retry: 'never', signal });
    return { up: true };
  } catch (error) {
    return probeResult(error);
  }
}
