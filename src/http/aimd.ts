/** The rate of a paced batch from published designs, each cited where it acts (together: docs/http.md#rate-limits); times (ms) as told. */
/** AIMD: concurrency-limits' `backoffRatio`, the rate after a refusal as a share of the rate refused. */
const BACKOFF_RATIO = 0.9;
const CLEAN_ANSWERS = 8;
/** BIC: the distance to PLATEAU × the rate refused shrinks 1/BINARY_ANSWERS an answer, then EPOCH_ANSWERS to it; past it steps double per PROBE_ANSWERS. */
const PLATEAU = 0.98;
const BINARY_ANSWERS = 8;
const EPOCH_ANSWERS = 150;
const PROBE_ANSWERS = 30;
/** The AWS SDK's `minFillRate` (requests a second); slow start's first rate at most, and RFC 5681's initial window (requests a round trip). */
const MIN_RATE = 0.5;
const INITIAL_RATE = 20;
const INITIAL_WINDOW = 2;
/** RFC 5681's DupThresh: refusals within a round trip that show a spent burst. */
const DUP_THRESH = 3;
/** RFC 6298's α (a new round trip's weight) and RTO in round trips (SRTT + K × RTTVAR, K = 4, RTTVAR = SRTT / 2 as it starts: §2.2). */
const RTT_ALPHA = 1 / 8;
const RTO_ROUNDS = 3;
/** HyStart's N_RTT_SAMPLE (Ha and Rhee, 2011): answers a reading of a budget needs to end slow start. */
const HYSTART_SAMPLES = 8;
const CDV_MS = 2;

export class AimdRate {
  /** Requests a second (undefined until the first answer), and the rate at the last decrease: the limit as last found. */
  rate: number | undefined;
  lastRefused: number | undefined;
  heldUntil = 0;
  private srtt = 0;
  private slowStart = true;
  private ssthresh = 0;
  private resumedAt = Number.NEGATIVE_INFINITY;
  private lastAnswer = Number.POSITIVE_INFINITY;
  private increasedAt = Number.NEGATIVE_INFINITY;
  private decreasedAt = Number.NEGATIVE_INFINITY;
  private markedAt = Number.NEGATIVE_INFINITY;
  /** Answers accepted to requests sent since the last decrease (none since one: a refusal after it is a timeout); of them past the rate refused. */
  private clean = 0;
  private probed = 0;
  /** When the first answer came; the answers and the sends of the requests accepted in the last second; a spent window's quota. */
  private firstAnswer: number | undefined;
  private readonly accepts: number[] = [];
  private readonly sends: number[] = [];
  private quota = Number.POSITIVE_INFINITY;
  /** The ceiling (a stated policy, `--rate`), the budget read when it last stood high (when, what was left, answers accepted since). */
  private ceiling: number | undefined;
  private drain = { t: 0, remaining: -1, accepted: 0 };
  /** A run of refusals: its first refused request's send and answer times, what was accepted and refused since, the second before it. */
  private edge: { start: number; at: number; accepted: number; refused: number; before: number } | undefined;
  private undo: { from: number; to: number; lastRefused: number | undefined; quota: number; ssthresh: number; accepted: number; refused: number } | undefined;
  constructor(private readonly maxRate: number | undefined) {
    if (maxRate !== undefined) this.stated(maxRate);
  }
  interval(): number {
    return this.rate === undefined ? 0 : 1000 / this.rate;
  }
  /** Any answer to a request sent at `start`, at `t`: the round trip, and the first rate. */
  answered(start: number, t: number): void {
    this.srtt = this.firstAnswer === undefined ? t - start : this.srtt + RTT_ALPHA * (t - start - this.srtt);
    this.firstAnswer ??= t;
    // An RTO with no answer once refused: slow start again, uncapped until a decrease (RFC 5681 §4.1), from the second before's or a quota (BBR's idle restart).
    if (t - this.lastAnswer > RTO_ROUNDS * Math.max(this.srtt, this.interval()) && this.decreasedAt > Number.NEGATIVE_INFINITY) {
      this.ssthresh = Math.max(this.ssthresh, this.rate ?? 0);
      this.resumedAt = t;
      this.set(this.quota < Number.POSITIVE_INFINITY ? this.quota : Math.min(this.rate ?? 0, inLastSecond(this.accepts, this.lastAnswer)));
    }
    this.lastAnswer = t;
    if (this.rate !== undefined) return;
    this.set(Math.min(INITIAL_RATE, (INITIAL_WINDOW * 1000) / Math.max(1, this.srtt)));
    this.increasedAt = t;
  }
  unanswered(): void {
    if (this.rate === undefined) this.set(INITIAL_RATE);
  }
  /** An accepted answer to a request sent at `start`, at `t`; `limited`: the pace held work back. */
  accepted(start: number, t: number, limited: boolean): void {
    this.accepts.push(t);
    this.sends.push(start);
    this.drain.accepted++;
    if (this.edge && start >= this.edge.start) this.edge.accepted++;
    // Accepted, sent after the edge and before a refusal read with none accepted: the reading was spurious (Eifel's detection, RFC 3522), undone (RFC 4015).
    if (this.undo && start >= this.undo.from && start < this.undo.to && ++this.undo.accepted >= this.undo.refused) {
      ({ lastRefused: this.lastRefused, quota: this.quota, ssthresh: this.ssthresh } = this.undo);
      this.undo = undefined;
    }
    if (start < this.decreasedAt) return;
    if (++this.clean >= CLEAN_ANSWERS) this.edge = this.undo = undefined;
    if (this.rate === undefined || !limited) return;
    if (this.slowStart || this.rate < this.ssthresh) {
      // Doubles a round: on an answer to one sent since the last doubling and, without a budget, at least the first interval on (RFC 3742's bound).
      if (start < this.increasedAt || (this.drain.remaining < 0 && t - this.increasedAt < 1000 / INITIAL_RATE)) return;
      this.increasedAt = t;
      this.set(this.slowStart ? this.rate * 2 : Math.min(this.rate * 2, this.ssthresh), this.decreasedAt < this.resumedAt ? undefined : t);
      return;
    }
    const last = this.lastRefused ?? this.rate;
    if (this.rate > last) this.probed++;
    const step = ((1 - PLATEAU) * last * 2 ** Math.floor(this.probed / PROBE_ANSWERS)) / EPOCH_ANSWERS;
    this.set(this.rate + Math.max(step, (PLATEAU * last - this.rate) / BINARY_ANSWERS), t);
  }
  /** A window's quota as a sliding window log (Mahdi, Figma 2017): with `inFlight` in the air, the next leaves a second and CDV_MS after the send whose end makes room (I.371's cell delay variation: a request reaches the server's log later than the one it replaces by up to a jitter, in whole ms). */
  notBefore(t: number, inFlight: number): number {
    const over = inLastSecond(this.sends, t) + inFlight - this.quota;
    return over < 0 ? 0 : (this.sends[Math.min(over, this.sends.length - 1)] ?? t) + 1000 + CDV_MS;
  }
  /** A refusal of a request sent at `start`, at `t`, held until `until` (its Retry-After); true for a timeout. */
  refused(start: number, t: number, until: number): boolean {
    const rate = this.rate ?? INITIAL_RATE;
    const held = start < this.heldUntil;
    this.heldUntil = Math.max(this.heldUntil, until);
    if (this.edge && t - this.edge.at <= this.srtt) this.edge.refused++;
    // What the readings below with none accepted since the edge replace: an answer still in flight may refute them (a gateway answers a refusal sooner).
    if (this.edge?.accepted === 0) {
      this.undo ??= { from: this.edge.start, to: start, refused: 0, accepted: 0, lastRefused: this.lastRefused, quota: this.quota, ssthresh: this.ssthresh };
      Object.assign(this.undo, { to: start, refused: this.edge.refused });
    }
    // DupThresh refused with none accepted: a spent burst or window, whose last second bounds the climb (the AWS SDK's lastMaxRate, at most its measured rate).
    if (this.edge?.refused === DUP_THRESH && this.edge.accepted === 0 && this.lastRefused !== undefined)
      this.lastRefused = Math.max(MIN_RATE, Math.min(this.lastRefused, this.edge.before));
    // Refused an interval of the second before's rate past the edge, none accepted: no bucket, a window of its quota; refused under it, what its log then held.
    if (this.edge?.accepted === 0 && start - this.edge.at >= 1000 / this.edge.before) this.quota = Math.min(this.quota, this.edge.before);
    else if (this.quota < Number.POSITIVE_INFINITY) this.quota = Math.max(1, Math.min(this.quota, inLastSecond(this.sends, start)));
    // One sent within an interval of the last decrease was spaced by the rate before it (NewReno's one decrease a round trip, RFC 6582).
    if (start < this.decreasedAt + this.interval()) return false;
    const timeout = this.clean === 0 && this.decreasedAt > Number.NEGATIVE_INFINITY;
    // A repeated timeout while a refusal's Retry-After holds keeps ssthresh and the rate (RFC 5681 §3.1); the back-off still doubles.
    if (timeout && held && this.ssthresh > 0) return true;
    this.edge ??= { start, at: t, accepted: 0, refused: 1, before: inLastSecond(this.accepts, t) };
    if (!timeout) this.ssthresh = 0;
    else if (this.ssthresh === 0) this.ssthresh = this.edge.before;
    // Past the edge a server accepts at its limit: what it accepted since (a round trip later), + 1, bounds it (BBR's delivery rate, Cardwell et al. 2016).
    const limit = timeout || this.edge.refused >= DUP_THRESH ? ((this.edge.accepted + 1) * 1000) / Math.max(1, t - this.srtt - this.edge.start) : rate;
    this.lastRefused = Math.max(MIN_RATE, Math.min(rate, limit));
    this.set(Math.min(timeout ? limit : rate, rate * (this.slowStart || this.clean < CLEAN_ANSWERS ? 0.5 : BACKOFF_RATIO)), t);
    this.slowStart = false;
    this.clean = 0;
    this.probed = 0;
    this.decreasedAt = t;
    return timeout;
  }
  /** A budget with `remaining` left, `inFlight` in the air: HyStart's exit as they would spend it, at half the rate or the refill rate; at 0, ECN's mark. */
  budget(start: number, t: number, remaining: number, inFlight: number): void {
    const d = remaining >= this.drain.remaining ? (this.drain = { t, remaining, accepted: 0 }) : this.drain;
    if (this.slowStart && remaining <= inFlight && d.accepted >= HYSTART_SAMPLES)
      this.leaveSlowStart(Math.max(MIN_RATE, (this.rate ?? 0) / 2, ((d.accepted - d.remaining + remaining + 1) * 1000) / Math.max(1, t - d.t)));
    if (remaining > 0 || start < this.decreasedAt + this.interval()) return;
    const rate = this.rate ?? INITIAL_RATE;
    if (this.slowStart) this.leaveSlowStart(rate);
    else if (t >= this.markedAt + this.srtt) {
      // Once a round trip, and not a decrease: a refusal after it still counts.
      this.markedAt = t;
      this.lastRefused = rate;
      this.set(rate * BACKOFF_RATIO, t);
      this.probed = 0;
    }
  }
  stated(rate: number): void {
    this.ceiling = Math.min(rate, this.maxRate ?? rate);
    if (this.slowStart || this.rate === undefined || this.rate > this.ceiling) this.leaveSlowStart(this.ceiling);
  }
  private leaveSlowStart(rate: number): void {
    this.slowStart = false;
    this.lastRefused = rate;
    this.set(rate);
  }
  /** Sets the rate: at most the ceiling and, once refused (at `t`), twice what the server accepted lately (the AWS SDK's cap). */
  private set(rate: number, t?: number): void {
    const since = t === undefined ? 0 : Math.min(1000, Math.max(1, t - (this.firstAnswer ?? t)));
    const measured = t === undefined || this.lastRefused === undefined ? rate : Math.max(INITIAL_RATE, (2000 * inLastSecond(this.accepts, t)) / since);
    this.rate = Math.max(MIN_RATE, Math.min(rate, measured, this.ceiling ?? rate));
  }
}

function inLastSecond(times: number[], t: number): number {
  while (times.length > 0 && (times[0] as number) <= t - 1000) times.shift();
  return times.length;
}
