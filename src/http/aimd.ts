/**
 * The rate of a paced batch (docs/http.md#rate-limits): TCP's slow start (RFC 5681 §3.1) from two
 * requests a round trip, then AIMD (Chiu and Jain 1989) as Netflix's concurrency-limits runs it
 * (`AIMDLimit`, `backoffRatio` 0.9), on the rate a client token bucket fills at, as the AWS SDKs'
 * adaptive retry mode paces (its rate never past twice what it measured). After a decrease it climbs
 * back by BIC's binary search, then probes past the rate refused with a step that doubles (BIC's max
 * probing; Xu, Harfoush and Rhee 2004). One decrease a round trip (NewReno, RFC 6582); refused again
 * with nothing accepted since, the caller backs off in time (RFC 6298 §5.5); growth only while the
 * pace holds the work back (RFC 7661). A run of refusals reads the limit from what the server
 * accepted since its edge (BBR's delivery rate), and after a timeout slow start climbs back to
 * ssthresh (RFC 5681 §3.1): see `edge`. No I/O: every method takes the time (ms) it is told.
 */

/** concurrency-limits' `backoffRatio`: the rate after a refusal, as a share of the rate refused. */
const BACKOFF_RATIO = 0.9;
/** Accepted answers to climb back to the rate of the last decrease: about one refusal for this many requests at the limit. */
const EPOCH_ANSWERS = 150;
/** Past the rate refused, the step doubles every PROBE_ANSWERS clean answers. */
const PROBE_ANSWERS = 30;
/** Under the plateau, the distance to it shrinks by 1/BINARY_ANSWERS each answer. */
const BINARY_ANSWERS = 8;
/** BIC's plateau: the share of the rate refused the binary search aims at; from there the additive steps take EPOCH_ANSWERS answers to it. */
const PLATEAU = 0.98;
/** Answers accepted at a rate before a refusal costs a step of BACKOFF_RATIO rather than a halving. */
const CLEAN_ANSWERS = 8;
/** The AWS SDK's `minFillRate`: the slowest pace (requests per second). */
const MIN_RATE = 0.5;
/** Slow start's first rate at most (requests per second), where a round trip is shorter than its interval. */
const INITIAL_RATE = 20;
/** RFC 5681 §3.1's initial window: requests a round trip at the start. */
const INITIAL_WINDOW = 2;
/** RFC 5681's DupThresh: this many refusals in a run are a spent burst or a full window, not one request early. */
const DUP_THRESH = 3;
/** RFC 6298's α: the weight of a new round trip in the smoothed one. */
const RTT_ALPHA = 1 / 8;

/** What a refusal did: nothing (the request was sent before the last decrease), a decrease, or a timeout (a decrease and a back-off). */
export type Refusal = 'old' | 'decrease' | 'timeout';

/** The rate controller. No I/O: every method takes the time (ms) it is told. */
export class AimdRate {
  /** Requests per second; undefined until the first answer (the first request goes alone). */
  rate: number | undefined;
  /** The rate at the last decrease (the limit as last found); undefined before any. */
  lastRefused: number | undefined;
  /** When the last decrease was: requests sent before it were sent faster. */
  private decreasedAt = Number.NEGATIVE_INFINITY;
  private srtt: number | undefined;
  private slowStart = true;
  /** When slow start last doubled the rate. */
  private increasedAt = Number.NEGATIVE_INFINITY;
  /** Answers accepted to requests sent since the last decrease. */
  private cleanAnswers = 0;
  /** Clean answers while the rate was past the rate of the last decrease. */
  private probed = 0;
  /** Refusals of requests sent since the last decrease, none of them accepted since. */
  private refusedInRow = 0;
  /** When the first answer came, and the times of the accepted answers of the last second. */
  private firstAnswer: number | undefined;
  private readonly accepts: number[] = [];
  /** The rate a server's policy states, or `--rate`: the rate never exceeds it. */
  private ceiling: number | undefined;
  /**
   * A run of refusals (until CLEAN_ANSWERS are accepted in a row): when its first refused request
   * was sent and answered, the answers accepted to requests sent since, its refusals answered within
   * a round trip of the first, and what the server accepted over the second before it.
   */
  private edgeStart: number | undefined;
  private edgeAt = 0;
  private edgeAccepted = 0;
  private edgeRefused = 0;
  private edgeMeasured = 0;
  /** RFC 5681's ssthresh: after a timeout, slow start climbs back up to it (0: no restart). */
  private ssthresh = 0;
  /** Slow start runs again since the last decrease. */
  private resumed = false;

  constructor(private readonly maxRate: number | undefined) {
    this.ceiling = maxRate;
    if (maxRate !== undefined) this.leaveSlowStart(maxRate);
  }

  /** The interval between requests (ms), 0 while unknown. */
  interval(): number {
    return this.rate === undefined ? 0 : 1000 / this.rate;
  }

  /** An answer (accepted or refused) to a request sent at `start`, at `t`: the round trip, and the first rate. */
  answered(start: number, t: number): void {
    this.firstAnswer ??= t;
    this.srtt = this.srtt === undefined ? t - start : this.srtt + RTT_ALPHA * (t - start - this.srtt);
    if (this.rate !== undefined) return;
    this.set(Math.min(INITIAL_RATE, INITIAL_WINDOW * (1000 / Math.max(1, this.srtt))));
    this.increasedAt = t;
  }

  /** A request that failed without an answer: the first rate, if none yet. */
  unanswered(): void {
    if (this.rate === undefined) this.set(INITIAL_RATE);
  }

  /** An accepted answer to a request sent at `start` (at `t`, after `answered`); `limited`: the pace held work back. */
  accepted(start: number, t: number, limited: boolean): void {
    this.accepts.push(t);
    this.measured(t);
    if (this.edgeStart !== undefined && start >= this.edgeStart) this.edgeAccepted++;
    if (start >= this.decreasedAt) {
      this.refusedInRow = 0;
      if (++this.cleanAnswers >= CLEAN_ANSWERS) this.edgeStart = undefined;
    }
    if (this.rate === undefined || !limited || start < this.decreasedAt) return;
    if (!this.slowStart && this.rate < this.ssthresh) {
      // After a timeout, slow start again up to ssthresh (RFC 5681 §3.1).
      if (start >= this.increasedAt) {
        this.increasedAt = t;
        this.resumed = true;
        this.set(Math.min(this.rate * 2, this.ssthresh), t);
      }
    } else if (!this.slowStart) {
      // Past the rate of the last decrease, the step doubles each PROBE_ANSWERS clean answers (BIC's
      // max probing, Xu, Harfoush and Rhee 2004): a limit that rose, or one under-read, is found in a few epochs.
      const last = this.lastRefused ?? this.rate;
      if (this.rate > last) this.probed++;
      const step = ((1 - PLATEAU) * last * 2 ** Math.floor(this.probed / PROBE_ANSWERS)) / EPOCH_ANSWERS;
      // BIC's binary search increase up to the plateau under the rate refused (a share of the distance each answer), then additive steps.
      this.set(this.rate + Math.max(step, (PLATEAU * last - this.rate) / BINARY_ANSWERS), t);
    } else if (start >= this.increasedAt) {
      // Slow start: twice the rate once a round trip, on the first answer to a request sent since the last doubling.
      this.increasedAt = t;
      this.set(this.rate * 2, t);
    }
  }

  /** The rate answers were accepted at over the last second, or since the first (the AWS SDK's measured rate, counted on what the server accepted). */
  private measured(t: number): number {
    return (this.lastSecond(t) * 1000) / Math.min(1000, Math.max(1, t - (this.firstAnswer ?? t)));
  }

  /** The answers accepted over the last second. */
  private lastSecond(t: number): number {
    const a = this.accepts;
    while (a.length > 0 && (a[0] as number) <= t - 1000) a.shift();
    return a.length;
  }

  /**
   * A refusal of a request sent at `start` (answered `t`): the decrease. Or (`mark`) a budget nearly
   * spent: in slow start, its end (later, a bucket kept nearly empty is the steady state at the limit).
   */
  refused(start: number, t: number, mark = false): Refusal {
    if (!mark && this.edgeStart !== undefined && t - this.edgeAt <= (this.srtt ?? 0)) this.edgeRefused++;
    if (start < this.decreasedAt || (mark && !this.slowStart)) return 'old';
    if (mark) {
      // HyStart's exit (Ha and Rhee 2011): slow start ends before a refusal, the rate kept.
      this.leaveSlowStart(this.rate ?? INITIAL_RATE);
      return 'old';
    }
    const timeout = this.refusedInRow++ >= 1;
    const sentAt = this.rate ?? INITIAL_RATE;
    const edgeRate = this.edge(start, t, timeout, sentAt);
    this.lastRefused = Math.max(MIN_RATE, Math.min(sentAt, edgeRate));
    // Halved (RFC 5681's ssthresh = FlightSize / 2) until a rate has run clean for a few answers: out
    // of slow start, or after such a halving, the rate may be twice the limit, and steps of 0.9 would
    // each cost a refusal on the way down.
    this.set(Math.min(timeout ? edgeRate : sentAt, sentAt * (this.slowStart || this.cleanAnswers < CLEAN_ANSWERS ? 0.5 : BACKOFF_RATIO)));
    this.cleanAnswers = 0;
    this.slowStart = false;
    this.decreasedAt = t;
    this.probed = 0;
    return timeout ? 'timeout' : 'decrease';
  }

  /**
   * The limit as a run of refusals reads it, for a refusal of a request sent at `start` (answered
   * `t`). Past the edge the server accepts at its limit however fast it is asked (a spent bucket
   * refills at its rate, a full window opens at its quota), so what it accepted of the requests sent
   * since the edge, plus the one it may be about to, over the time since, bounds the limit from
   * above: BBR's delivery rate (Cardwell et al. 2016), counted from the edge. Answers come a round
   * trip after their requests left, so those counted left in [edgeStart, t - srtt]. The run's first
   * refusal says only that the limit was passed; the later ones read it once nothing was accepted
   * since the last decrease (a timeout) or DUP_THRESH refusals came at once (a spent burst, a full
   * window: many refusals after a clean stretch). A timeout also sets ssthresh (RFC 5681 §3.1): the
   * requests accepted in the second before the run (a window opens again at its quota: a count, not a
   * rate over a shorter start), or half the rate refused where slow start, restarted, was refused on
   * its way there.
   */
  private edge(start: number, t: number, timeout: boolean, sentAt: number): number {
    const first = this.edgeStart === undefined;
    if (first) {
      this.edgeStart = start;
      this.edgeAt = t;
      this.edgeAccepted = 0;
      this.edgeRefused = 1;
      this.edgeMeasured = this.lastSecond(t);
      this.ssthresh = 0;
    }
    if (this.resumed) this.ssthresh = sentAt / 2;
    else if (timeout && this.ssthresh === 0) this.ssthresh = this.edgeMeasured;
    this.resumed = false;
    if (first || !(timeout || this.edgeRefused >= DUP_THRESH)) return sentAt;
    return ((this.edgeAccepted + 1) * 1000) / Math.max(1, t - (this.srtt ?? 0) - (this.edgeStart as number));
  }

  /** A stated policy of `rate` requests a second: the pace starts there, and never goes past it. */
  stated(rate: number): void {
    const ceiling = this.maxRate === undefined ? rate : Math.min(rate, this.maxRate);
    if (this.ceiling === ceiling) return;
    this.ceiling = ceiling;
    if (this.slowStart || this.rate === undefined || this.rate > ceiling) this.leaveSlowStart(ceiling);
  }

  /** Starts paced at `rate`, as if last refused there. */
  private leaveSlowStart(rate: number): void {
    this.slowStart = false;
    this.lastRefused = rate;
    this.set(rate);
  }

  /**
   * Sets the rate: at most the ceiling, and once the server has refused (the AWS SDK's newRate ≤
   * 2 × measuredTxRate, from its first throttle on) twice what the server accepted lately.
   */
  private set(rate: number, t?: number): void {
    const measured = t === undefined || this.lastRefused === undefined ? undefined : Math.max(INITIAL_RATE, 2 * this.measured(t));
    const capped = Math.min(rate, measured ?? rate, this.ceiling ?? rate);
    this.rate = Math.max(MIN_RATE, capped);
  }
}
