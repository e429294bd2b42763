/**
 * The batch limiter's pacing (src/http/adaptive.ts) as properties over families of server limiters,
 * in virtual time (test/http/limiters.ts): every figure is a count of requests at virtual instants.
 * For every generated limiter, 600 rows at the default --concurrency 16, timers up to a millisecond
 * late as Node's are. What reaches the limiter is what reaches real nginx: each request arrives late
 * by an exponential draw of mean 0.3 ms (the event loop, the journal's flush, loopback) and an
 * accepted one's upstream answers later by one of mean 1 ms; a share of the round trip drawn per
 * case lies behind the limiter, a gateway that answers a refusal itself, so a refusal comes back
 * sooner than an acceptance (from no share, the limiter in the application, to nearly all, nginx on
 * loopback). Measured through nginx limit_req 40r/s in front of the sandbox (test/infra, load 5-8):
 * a 429 came back in 0.7 ms (median; 0.6-1.2 p10-p90), an answer of the upstream in 2.0 (1.7-4.5),
 * opcli's accepted claims in 3.3 (2.5-7.3, p99 26); requests sent evenly at 39/s were refused 5.5 %;
 * opcli's refusals came at paces of 21-43/s, each a decrease. Without the jitter the simulator paced
 * nginx 40/s at 0.96-0.97 of the limit where real nginx on a quiet machine gives 0.93-0.94 (1.0 %
 * refused); with it, 0.92-0.94 (1.0-1.2 %).
 *
 * - every row is accepted exactly once (a refused row is asked again, nothing is filed twice);
 * - share: the rows the server accepted per second, up to the 570th (the last 5 % may wait out a
 *   refusal's Retry-After, a whole second at a server whose batch lasts 1.2 s), over the limit, or
 *   over what 16 requests in flight carry at that latency (concurrency ÷ latency) where lower: >= 0.9;
 * - refused: at most 2 % of the requests, plus what TCP's slow start (RFC 5681) costs when it ends:
 *   the requests of one round trip at up to twice the limit, min(16, 2 × limit × round trip), + 2.
 *   Where a burst hides the limit (a token bucket of size > 1, a window's quota, the bucket or window
 *   of a limit that halves) no client can keep to that, and the allowance is a full flight, 16 + 2.
 *   The arithmetic: until B requests are accepted, a bucket of r/s and burst B answers exactly as
 *   one of 500/s with the same burst. To reach 0.9 of 500/s over 570
 *   rows, a client must average x of it over the first B <= 100 rows with 570 / (470 + 100 / x) >= 0.9,
 *   so x >= 0.61; when the burst runs out it sends at least that fast, with min(16, 0.61 × 500/s ×
 *   round trip) requests in flight (all 16 from a 53 ms round trip), and the slow server refuses
 *   all but r × round trip of them together: up to 16 refusals no pacer avoids, on top of 2 %.
 * - at a strict limiter (no burst), timers late by half a millisecond on average lengthen every
 *   interval by that much (no busy waiting): 1 / (1 + limit × 0.5 ms) of the goal. And nginx counts
 *   whole milliseconds: it refuses a request less than 1000 / limit ms after the last accepted one,
 *   as a whole number, so two arrivals must be ⌈1000 / limit⌉ ms apart and no client passes
 *   1000 / ⌈1000 / limit⌉ a second: 0.87 of 164/s (7 ms, not 6.1), 0.67 of 499/s (3 ms, not 2.004);
 *   40/s (25 ms) loses nothing. The share's goal there is that bound's 0.9.
 *
 * The goal (issue 44) is 0.9 and 2 % with these allowances. Of fast-check's 100 cases a family from
 * seed 44, this design (GCRA, slow start in rounds of at least its first interval, AIMD with BIC's
 * climb, BBR's delivery rate after a spent burst, HyStart's exit and ECN's mark on a budget, slow start
 * again after an RTO with no answer, a window's quota kept as a sliding log once its refusals outlast
 * a bucket's interval and spaced by a jitter's tolerance, a reading of none accepted undone when an
 * acceptance refutes it: src/http/aimd.ts)
 * meets it in 100 for the slow 7/s API, 96 for a
 * stated policy (a late timer made up there: the server stated a burst), 75 for nginx's strict leaky
 * bucket, 70 for token buckets that send their budget's remaining, 76 with Retry-After alone, 72 with no
 * headers, 60 for the fixed window, 51 for the sliding window and 61 for a limit that halves (without
 * the jitter and the gateway: 100, 97, 91, 85, 83, 77, 74, 75, 64; the paragraphs below were measured
 * there). The jitter is not in the arithmetic below: two arrivals sent an interval apart reach a strict
 * limiter closer by up to a few tenths of a millisecond, a refusal no pacer at the limit avoids, and
 * each is a decrease. Per family below the goal, what the arithmetic allows a client that does not know the
 * limiter (none of these shortfalls is forced, so each is this design's, and issue 44 stays open):
 *
 * - Token buckets, no headers (short in 23: 12 slow buckets, 5-43/s, behind a burst, refused 34-48 of
 *   ~640 against ~31 allowed; 11 at 359-498/s, 0.78-0.90): after the burst the client must find r from
 *   refusals alone. A search that halves its rate on each refusal and reads the delivery rate after
 *   the edge needs about log2(0.61 × 500 / r) <= 6 refusals past the flight, within the 2 %; ours keeps
 *   probing above r. At 500/s a late timer is a lost interval (0.8 at half a millisecond late) unless
 *   made up, which a bucket allows: ours makes it up only where a quota is stated (below).
 *   Where the refusals go (5/s, burst 80, 6 ms): the flight 16, the search after it 9, slow start
 *   again toward the burst's rate 4, the climb back 9, each to 0.98 of a rate refused above r. Tried,
 *   none kept: halving on every refusal past the edge (floored at the delivery rate since it) drops
 *   the rate so far that the bucket refills and a second flight follows (17 of the first 49);
 *   CUBIC's fast convergence (RFC 9438 §4.7) halves the climb's refusals but costs high rates their
 *   share (74 -> 71); RFC 6937's rate reduction from slow start's end (a request for each accepted
 *   until one sent since is answered, then the delivery rate over it, where refusals outnumbered
 *   acceptances) takes this family to 79 (43/s behind 60 at 52 ms: 39 refused -> 30) and the
 *   sliding window to 67, but a halving leaky bucket to 23 of 29 and the halving sliding window's
 *   worst refusals from 0.059 to 0.074, in 421 lines; its RFC 6937 floor (in flight up to what was
 *   accepted, plus one) keeps the halving leaky bucket and takes this family to 83, but a sliding
 *   window to 0.22 (pace3, seed 44; the diffs are in its report).
 * - Budget headers (short in 15, 0-15 refused, 0.50-0.90 at 7-498/s): the budget's remaining ends
 *   slow start before the bucket is spent, so nothing forces the flight; making late timers up there
 *   as under a stated quota cost refusals past the bound at buckets drained by slow start (tried).
 * - Retry-After alone (short in 17: 7 at 359-496/s and 3-17 ms, 0.78-0.88; 5 at 40-79 ms, 0.89-0.90;
 *   5 slow buckets refused 31-37 against 30): Retry-After is whole seconds (RFC 9110), so every held
 *   retry waits 1 s, longer than the run at 500/s (1.2 s). A refused flight of k rows costs k rows'
 *   second; at 1 ms the forced flight is 0.61 × 500/s × 1 ms < 1 request, so a client refused once
 *   keeps the goal. Where the interval is longer than the round trip, slow start doubling on each
 *   answer compounds (20/s reached 20,000/s in 160 ms behind a burst of 50 at 1 ms) and all 16 slots
 *   were refused at the burst's end, a lost second (71 of 100, down to 0.28). A round of slow start now
 *   lasts at least its first interval, 50 ms, where no budget is read (a budget's remaining ends slow
 *   start itself, below): the rate at most doubles each 50 ms, the burst's end meets a few times the
 *   limit and only part of the slots. A round of 40 ms met 81 here, 70 ms 73 and nginx's bucket 87;
 *   applying it under budget headers too cost them 9 (slow start's time at 500/s, 0.83 at 1 ms).
 *   Capping slow start at twice the accepted rate, as the AWS SDK caps it after a throttle, keeps that
 *   flight small but takes long round trips' ramp (tried: 13-55 of 100 in most families). What is
 *   left at 3-17 ms: slow start's time (at 496/s and 5 ms the pace passes the limit 270 ms in; the
 *   6-9 slots refused together and held for a second cost nothing there, the others carry the
 *   limit meanwhile: lending them, below, left those shares as they were); at 40-79 ms: the 16
 *   slots' own bound reached one round late (slow start's time). Tried on top of it, none kept (pace5b, seed 44):
 *   the AWS cap measured over time the batch was not idle (all its rows waiting out Retry-After:
 *   RFC 7661 keeps the rate over such a pause) took the fixed window to 68 but this family to 80,
 *   its worst refusals 2.5 -> 6.2 %; once three of a flight are refused with nothing accepted since
 *   the edge, the rate set to one over the time since (the delivery rate's bound, before the held
 *   retries come back as a second flight) took no headers to 83 and this family to 86, but windows
 *   to 60-62 (worst 0.18: a window accepts nothing until it ends) and budgets to 84; BBR's startup
 *   gain 2/ln 2 a round for 2 took the 7/s API to 79 and budgets to 82. Tried, not kept (pace12,
 *   seed 44): a row waiting out its Retry-After lends its slot to a new row (up to 16 lent; the
 *   gate still keeps 16 in flight): the fixed window's worst 0.53 -> 0.80 (its refusals past the
 *   allowance 7.4 -> 3.0 %), the stated policy's worst 0.78 -> 0.87, halving 64 -> 68, but this
 *   family 83 -> 77 and budgets 85 -> 76 (buckets of 5-43/s behind a burst: the lent slots send a
 *   second flight within the round trip at the halved slow-start rate, and the held retries come
 *   back as a third; the held second was those cases' back-off). Lending half the held slots (RFC
 *   5681's halving): 80, budgets 81, fixed 73; one lent more per row accepted since the last
 *   refusal, from one (RFC 6937's slow-start reduction bound): 80, 82, fixed 73; from none: 82,
 *   fixed 75, halving 65; only once a hold has lasted an RTO: 78, budgets 83; all, once a quota is
 *   kept: fixed 75, the rest unchanged. Probing a refused flight's hold finds a window that reopens
 *   before it, and at a slow bucket costs refusals past the allowance; without it little changes.
 * - Fixed and sliding windows (short in 26 and 25; the sliding window's worst 0.77, from 0.34 before
 *   the log below, the fixed window's 0.53, from 0.38 with the restart below): a window of quota L over W = 1 s answers as a bucket of
 *   burst L until the quota is spent, so the first window costs the hidden burst's flight (allowed);
 *   after it the delivery rate since the edge is exactly L / W. Missing it costs 0.9 × 600 / L windows
 *   at most one flight each; ours misreads the quota as a burst for a round trip or two (down to 0.25).
 *   Tried on top of the 50 ms round, not kept (pace6, seed 44): pace5a's slow start again after an
 *   RTO with no answer (RFC 5681 §4.1), from the second before it and past the AWS cap until a
 *   decrease, which alone took the fixed window from 64 to 73, reaches 69 with the round (Retry-After
 *   83, halving 60, the rest unchanged). With the round the first window's end finds 14 of the 16
 *   slots in flight; the other two are refused again, timeouts that take the rate to 3/s, so the held
 *   second ends within three of those intervals and no restart follows (313/s at 2 ms stays 0.41).
 *   Around it: the RTO armed at the last answer's interval (policy 97 -> 92, windows unchanged), or
 *   counted from accepted answers only (fixed 65, sliding 62, nginx's bucket 88); either restarting
 *   at the second before rather than below the rate (Retry-After 82; or sliding 67 but fixed 64 and
 *   no headers 75); the round kept to the first slow start (fixed 68); the AWS cap skipped on every
 *   restart below ssthresh (fixed 69). Kept (pace7, pace8): that restart, and a second timeout of a request sent
 *   while an earlier refusal's Retry-After still holds leaves the rate where the first put it (RFC 5681 §3.1 holds ssthresh
 *   on a repeated timeout; the back-off still doubles), so the RTO stays short and the restart fires at the window's end:
 *   fixed 64 -> 71 (worst 0.38 -> 0.53), halving 59, Retry-After 84 -> 83, budgets 86 -> 85, the rest unchanged.
 *   Without the hold's rule fixed 66; keeping the rate at the restart (not the second before's), 68; every refusal in a
 *   hold not a decrease (or not a timeout): windows down to 0.17. Where windows lose now (pace8, seed 44): at 2-16 ms
 *   and 130-500/s slow start passes 10,000/s behind the first quota, all 16 slots are refused together and held a second
 *   (Retry-After: 1), so the window that reopens meanwhile goes unused (0.53-0.80); at 40-200 ms and 30-180/s the pace
 *   settles between L and 2L (the second before an edge spans two windows, the AWS cap is twice it), and each window's
 *   end refuses a flight. Tried, not kept: BBR v1's long-term bandwidth (Linux tcp_bbr.c, lt_bw: the delivery rate from
 *   one run of refusals to the next, two within 1/8 a policer's rate, capping the rate refused for 48 round trips) took
 *   halving to 62 (fixed 12, token 19, sliding 7) and the sliding window's worst refusals 3.9 -> 2.7 %, but no headers
 *   to 73 (at 208-498/s late timers read the rate low) and Retry-After to 82; with its loss threshold (50/256 over at
 *   least 4 round trips) checked at each refusal the 7/s API fails (0.785); the restart leaving ssthresh as it was
 *   (§4.1 does): fixed 70, halving 58; pace5b's restart without the AWS cap, on top of this one: the same counts, the
 *   sliding window's worst 0.34 -> 0.51, but the halving sliding kind past its refusal bound (58 refused of 658).
 *   At 34/s and 93 ms the climb after the first window aimed at slow start's rate (320/s: the flight's other refusals
 *   were sent before the decrease), so the held retries came back to a pace of 2-4 L. Kept (pace8): DupThresh refusals
 *   with none accepted since the edge cap the rate refused at the second before it, L for a window spent in it, as the
 *   AWS SDK caps lastMaxRate at its measured rate: fixed 72 (84/s at 155 ms 0.57 -> 0.70, 64 -> 33 refused; worst
 *   refusals past the allowance 0.108 -> 0.074), budgets' worst 0.495 -> 0.509, the rest unchanged; capping the rate
 *   there too: budgets to 0.07, no headers 73, Retry-After 80; with fewer than three accepted
 *   (rather than none): sliding 67, halving 60, but worst shares below their bounds (no headers 0.67, budgets 0.43,
 *   nginx's bucket 0.52). It over-reads where the window before was not spent (84/s at 155 ms: 16 slots carry 103/s,
 *   the second before an edge holds 104). Also tried: ssthresh at the
 *   restart the second before's count (fixed 66, Retry-After 84); the rate refused capped by the AWS SDK's measured
 *   rate (its lastMaxRate = min(measuredTxRate, fillRate)) in slow start: fixed 70, sliding 66, no headers and nginx's
 *   bucket below their bounds (a ramp's last second reads below the limit); the decrease from that measured rate too:
 *   every token bucket below its bound.
 *   Kept (pace9): a sliding log accepts after the first L only as many as it accepted a second before, so it replays the
 *   first window's pattern (slow start's ramp, then a burst) a second later; paced evenly at L, a client is refused
 *   wherever its sends run ahead of that replay. So once a request sent an interval of the second before's count (L)
 *   after the edge is refused with none accepted since (a bucket delivering that rate would have refilled a token), the
 *   client keeps that count as a quota on its own sliding log (Mahdi, Figma 2017): the next request leaves when its
 *   accepted sends of the last second and those in flight leave room, so it follows the replay without a refusal. Sliding
 *   65 -> 75 (worst 0.34 -> 0.77; 217/s at 6 ms from 0.55 to the goal), fixed 72 -> 74, halving 59 -> 62 (fixed 13,
 *   sliding 7), the rest unchanged. Taken at DupThresh refusals (none accepted) instead: sliding 81, fixed 77, but a
 *   strict bucket that refuses a flight reads as a window (408/s behind 0, 0.32; token buckets 69-75); at a refusal 50 ms
 *   past the edge: nginx's bucket 88 (5/s at 7 ms read as a window of 1); with fewer than DupThresh accepted since the
 *   edge (not none): sliding 76, but Retry-After 80, no headers 75. Then kept: a refusal under a quota lowers it to the
 *   count its log held when the refused request left (the server's count then was at least the limit: a limit that fell),
 *   and the restart after an RTO starts from the quota (BBR's restart from idle at its bandwidth estimate): halving 62 ->
 *   64 (sliding 7 -> 9: 493/s at 5 ms, halved 0.45 s in, had kept the old quota, 300; its probe at 1 s was refused with
 *   the log full, and the timeout's delivery rate, 2/s, left it 3 s to climb back), the rest unchanged; the restart
 *   alone: halving sliding 8 but fixed 12; the lower quota alone: sliding kind 8. Also tried, not kept: the rate set to
 *   the quota when it is found (sliding 74, the fixed window's refusals past its bound); the AWS cap skipped once a quota
 *   is kept: sliding 78, fixed 76, but refused 106 of 706 at a fixed window (34/s at 93 ms: the second before an edge
 *   spans two windows, a quota up to 2L) and the halving sliding kind past its bound; with the log, slow start's first
 *   rate at most 40/s (the 50 ms round kept): no headers 82, Retry-After 87, budgets 89, fixed 76, sliding 79, but
 *   halving 60 (leaky 22) and Retry-After's worst 0.52. Tried after it, not kept (pace9): under a kept quota a timeout
 *   leaves the rate as it is (the delivery rate over a shut window is no rate), and a refusal lowers the quota to 0.9 of
 *   the log's count (concurrency-limits' backoffRatio): halving 64 -> 66 (fixed 14, sliding 10; the sliding kind's worst
 *   0.41 -> 0.53), but fixed 73 and the sliding window's worst 0.77 -> 0.73 (489/s at 4 ms), and the quota never rises
 *   again; without the back-off's pause there: the halving sliding kind 7, its refusals 11 % past the allowance. Where
 *   A request the log lets leave a second after the one it replaces reaches the server's log later by the
 *   difference of two jitters, and the window counts whole ms: refused, each lowered the quota for good
 *   (5/s at 87 ms: 5 -> 4 at 4.4 s, 0.80). The log now waits CDV_MS = 2 ms more (I.371's cell delay
 *   variation tolerance; 1: sliding 48, 3: 52 but nginx's bucket 74): sliding 43 -> 51, halving 60 ->
 *   61, fixed 61 -> 60, the rest unchanged (pace14, seed 44). Where
 *   windows lose now: at 2-16 ms and 130-500/s the replay comes no earlier than the first window's ramp, 50 ms rounds
 *   from 20/s (495/s at 2 ms: 0.83; the 75 rows past the first quota wait for the first window's 75th acceptance, 0.33 s
 *   in); at 40-80 ms and 270-500/s, none refused, slow start's time to fill 16 slots (0.87-0.89); at 90-200 ms and
 *   30-180/s, one flight refused at each window's end (25-67 refused), or a rate halved at the first edge that climbs
 *   back slowly (84/s at 155 ms: 58/s).
 * - A stated policy (short in 3, 1-6 refused, 0.78-0.87 of the limit at 263-499/s): after a refusal
 *   late timers are no longer made up, and a late timer is a lost interval again. Making them up
 *   after a refusal too drains a bucket the refusal showed spent (tried: 23 of the first 47 cases met it).
 * - nginx's strict bucket (short in 25, 0.45-0.80, 5-32 refused): a gateway answers a refusal
 *   sooner than the upstream an acceptance, so refusals overtake the acceptances sent between them
 *   and a reading "with none accepted since the edge" (a quota, the DupThresh cap, a timeout) came
 *   too early: 84/s at 155 ms kept a quota of 35 (0.42). Such a reading now keeps what it replaced,
 *   undone once as many acceptances sent between the edge and the refused request came as refusals
 *   were read (Eifel, RFC 3522/4015, counted as Linux's undo_retrans): 74 -> 75 (worst 0.44 -> 0.71;
 *   84/s 0.79), budgets 70, halving 60, the policy's worst 0.67 (pace14). Undone on the first
 *   acceptance: no headers' worst refusals 3.0 -> 4.5 % (a spent token bucket accepts between refusals
 *   too); the rate restored as well: no headers 71, budgets 67. Left: at 2-16 ms and 217-495/s the pace
 *   sits at the whole-millisecond bound, where jitter refuses requests sent below rates accepted for
 *   20-140 answers, each lowering the rate refused (489/s at 4 ms: 336 -> 280/s in 2 s); keeping it
 *   after 50 clean answers: 75, no headers 70, Retry-After 75; after 30, halving 54; F-RTO's hold of a
 *   first refusal for two answers (RFC 5682): slow buckets 20-28 % refused. At 43-195 ms asked between
 *   its rate and twice it, it accepts every other request: the delivery rate reads half the limit.
 * - A limit that halves (short in 36: fixed 12 of 25, leaky 5 of 29, token 3 of 21, sliding 16 of
 *   25; 41 before pace9's log): the halving is a window of the kind above or a bucket whose new rate is hidden by its level,
 *   so each kind's bound above holds, plus one flight at the change. The round above took the token
 *   kind from 12 to 18 (fewer refused in its first flight) and its worst to 0.91, but the sliding
 *   kind's worst from 0.37 to 0.35 (493-499/s at 1-9 ms: slow start's time before the window's quota).
 *   Tried after it, none kept (pace5b, seed 44): slow start's restart after a timeout (up to
 *   ssthresh, what was accepted in the second before) without the AWS cap, which holds it to the
 *   pause's few answers: the same counts, worst shares up (sliding 0.51, this family 0.42) but the
 *   sliding kind's refusals 5.9 -> 6.4 % past the allowance; a decrease counted from what the 16
 *   slots carry at the round trip where the pace was above it (halving a pace the slots already
 *   held changed nothing): nginx's bucket 93, no headers 79, this family 60, but Retry-After 83,
 *   the fixed window 63 and the stated policy's worst 0.75; slow start's first rate at most 40/s
 *   (from 20, the 50 ms round kept): no headers 82, Retry-After 88, budgets 88, windows 70-71, but
 *   this family 55 (leaky 22, refusals 8.0 % past the allowance) and Retry-After's worst 0.52.
 *
 * So each family asserts the bound this design reaches in all 100 (`reached`, the worst case's share
 * and refusals past the allowance, rounded down and up), and the tally printed after the run says how
 * many cases meet the goal.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type Announce, type BatchRun, fixedWindow, leakyBucket, runBatch, type SimLimiter, seeded, slidingWindow, tokenBucket } from './limiters.js';

const ROWS = 600;
const CONCURRENCY = 16;
/** Node's timers fire up to about a millisecond late; the pacing's sleeps are drawn from [0, LATE_MS). */
const LATE_MS = 1;
/** The mean ms by which a request reaches the limiter late, and an accepted one's upstream answers late (measured through nginx: see the header). */
const JITTER_MS = 0.3;
const SERVICE_JITTER_MS = 1;

interface Case {
  server: (now: () => number) => SimLimiter;
  /** The limit (requests per second), and after `changeAfter` rows the one it changes to. */
  limit: number;
  changeTo?: number;
  latencyMs: number;
  /** A strict limiter (no burst): a request can leave no earlier than its interval after the last, so a late timer is lost. */
  strict?: boolean;
  /** A burst or a window hides the limit until it is spent: what is in flight then is refused together (see the header). */
  hidden?: boolean;
}

/** What a batch reached: its share of the limit (as above) and the share of requests refused. */
function measure(run: BatchRun, c: Case) {
  const target = (limit: number) => Math.min(limit, (CONCURRENCY * 1000) / c.latencyMs);
  const at = run.acceptedAt;
  const first = at[0] as number;
  const end = at[Math.floor(ROWS * 0.95) - 1] as number;
  const changed = run.changedAt !== undefined && run.changedAt < end ? run.changedAt : undefined;
  const allowed =
    changed === undefined
      ? ((end - first) / 1000) * target(c.limit)
      : ((changed - first) / 1000) * target(c.limit) + ((end - changed) / 1000) * target(c.changeTo as number);
  return { share: Math.floor(ROWS * 0.95) / (allowed + 1), refused: run.refusedAt.length / (run.refusedAt.length + at.length) };
}

/** The requests of one round trip at twice the limit, as many as can be in flight: what slow start's end may cost. */
const slowStartCost = (c: Case) => (c.hidden ? CONCURRENCY : Math.min(CONCURRENCY, Math.ceil((2 * c.limit * c.latencyMs) / 1000))) + 2;

/** A strict limiter and timers late by LATE_MS / 2 on average: each interval is that much longer than the limit's. */
const timerBound = (c: Case) => (c.strict ? msBound(c.limit) / (1 + (c.limit * LATE_MS) / 2 / 1000) : 1);

/** At a strict limiter that counts whole milliseconds (nginx), no client passes 1000 / ⌈1000 / limit⌉ a second (see the header). */
const msBound = (limit: number) => 1000 / Math.ceil(1000 / limit - 1e-9) / limit;

/** The bounds this design reaches in every generated case of a family (the goal: 0.9 and 0.02). */
interface Reached {
  share: number;
  refused: number;
}
const GOAL: Reached = { share: 0.9, refused: 0.02 };
/** Per family: runs, and runs that met the goal. */
const tally = new Map<string, { runs: number; met: number; worst: string[] }>();

async function check(family: string, reached: Reached, c: Case, seed: number) {
  const run = await runBatch({
    server: c.server,
    rows: ROWS,
    latencyMs: c.latencyMs,
    concurrency: CONCURRENCY,
    lateMs: LATE_MS,
    seed,
    // The share of the round trip behind a gateway that answers refusals itself: from none (the limiter is the application) to nearly all (nginx on loopback).
    upstreamShare: seeded(seed)(),
    jitterMs: JITTER_MS,
    serviceJitterMs: SERVICE_JITTER_MS,
    changeAfter: c.changeTo && ROWS / 2,
    changeTo: c.changeTo,
  });
  const m = measure(run, c);
  const what = `share ${m.share.toFixed(3)}, ${run.refusedAt.length} refused of ${run.refusedAt.length + run.acceptedAt.length}`;
  expect(run.acceptedAt, what).toHaveLength(ROWS);
  expect(run.peakInFlight).toBeLessThanOrEqual(CONCURRENCY);
  const requests = run.refusedAt.length + ROWS;
  const t = tally.get(family) ?? { runs: 0, met: 0, worst: [] };
  tally.set(family, t);
  t.runs++;
  if (m.share >= GOAL.share * timerBound(c) && run.refusedAt.length <= GOAL.refused * requests + slowStartCost(c)) t.met++;
  else t.worst.push(`${c.limit}/s at ${c.latencyMs} ms: ${what}`);
  expect(m.share, what).toBeGreaterThanOrEqual(reached.share * timerBound(c));
  expect(run.refusedAt.length, what).toBeLessThanOrEqual(reached.refused * requests + slowStartCost(c));
}

const rate = fc.integer({ min: 5, max: 500 });
const latency = fc.integer({ min: 1, max: 200 });
const burst = fc.integer({ min: 0, max: 100 });
const seed = fc.integer({ min: 1, max: 2 ** 30 });
/** fast-check's default 100 runs a property, from a fixed seed: every run of the suite checks the same cases. */
const RUNS = { seed: 44 };

describe('pacing against families of server limiters (virtual time, properties)', () => {
  afterAll(() => {
    for (const [family, t] of tally)
      console.info(`${family}: ${t.met} of ${t.runs} runs meet 0.9 and 2 %${t.worst.length ? `; short: ${t.worst.join('; ')}` : ''}`);
  });

  it('a token bucket that states its policy (RateLimit-Policy): paced at it from the first answer, nothing refused', async () => {
    await fc.assert(
      fc.asyncProperty(rate, burst, latency, seed, async (limit, size, latencyMs, s) => {
        await check('policy', { share: 0.67, refused: GOAL.refused }, { server: (now) => tokenBucket(now, limit, size, 'policy'), limit, latencyMs }, s);
      }),
      RUNS,
    );
  });

  it.each(['none', 'retry-after', 'combined', 'ietf', 'x'] as Announce[])('a token bucket announcing %s, any burst', async (announce) => {
    // Without headers the worst of 100 cases is 0.67 of the limit and 3.0 % past the flight; with
    // Retry-After alone 0.67 (part of the slots refused and held for a second), 2.1 %; a budget's
    // remaining ends slow start before it runs out (0.38 at worst, within 2 %).
    const reached =
      announce === 'none'
        ? { share: 0.67, refused: 0.03 }
        : announce === 'retry-after'
          ? { share: 0.67, refused: 0.021 }
          : { share: 0.38, refused: GOAL.refused };
    await fc.assert(
      fc.asyncProperty(rate, burst, latency, seed, async (limit, size, latencyMs, s) => {
        await check(
          `token bucket, ${announce}`,
          reached,
          { server: (now) => tokenBucket(now, limit, size, announce), limit, latencyMs, strict: size <= 1, hidden: size > 1 },
          s,
        );
      }),
      RUNS,
    );
  });

  it("nginx's strict leaky bucket (limit_req without burst)", async () => {
    await fc.assert(
      fc.asyncProperty(rate, latency, seed, async (limit, latencyMs, s) => {
        await check('strict leaky bucket', { share: 0.71, refused: 0.023 }, { server: (now) => leakyBucket(now, limit), limit, latencyMs, strict: true }, s);
      }),
      RUNS,
    );
  });

  it('a fixed window of one second, Retry-After to its end', async () => {
    await fc.assert(
      fc.asyncProperty(rate, latency, seed, async (limit, latencyMs, s) => {
        await check('fixed window', { share: 0.54, refused: 0.016 }, { server: (now) => fixedWindow(now, limit), limit, latencyMs, hidden: true }, s);
      }),
      RUNS,
    );
  });

  it('a sliding window log of one second, no headers', async () => {
    await fc.assert(
      fc.asyncProperty(rate, latency, seed, async (limit, latencyMs, s) => {
        await check('sliding window', { share: 0.39, refused: 0.016 }, { server: (now) => slidingWindow(now, limit), limit, latencyMs, hidden: true }, s);
      }),
      RUNS,
    );
  });

  it('a slow API: a token bucket of 7/s, burst 1, Retry-After: 1 (seven intervals long)', async () => {
    await fc.assert(
      fc.asyncProperty(latency, seed, async (latencyMs, s) => {
        await check('7/s, Retry-After: 1', GOAL, { server: (now) => tokenBucket(now, 7, 1, 'retry-after'), limit: 7, latencyMs, strict: true }, s);
      }),
      RUNS,
    );
  });

  it('a limit that halves mid-run (a shared quota), whatever the kind', async () => {
    const kinds = fc.constantFrom('token', 'leaky', 'fixed', 'sliding');
    await fc.assert(
      fc.asyncProperty(kinds, fc.integer({ min: 10, max: 500 }), latency, seed, async (kind, limit, latencyMs, s) => {
        const server = (now: () => number) =>
          kind === 'token'
            ? tokenBucket(now, limit, limit, 'retry-after')
            : kind === 'leaky'
              ? leakyBucket(now, limit)
              : kind === 'fixed'
                ? fixedWindow(now, limit)
                : slidingWindow(now, limit);
        await check(
          `halving, ${kind}`,
          { share: 0.36, refused: 0.041 },
          { server, limit, changeTo: limit / 2, latencyMs, strict: kind === 'leaky', hidden: kind !== 'leaky' },
          s,
        );
      }),
      RUNS,
    );
  });
});
