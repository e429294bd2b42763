/** Fault injection: rules matched in order against method and path, with after/count/rate bookkeeping. */
import * as z from 'zod';

/**
 * A fault rule. Rules are matched in order against method and path; the first that applies wins.
 * `phase: 'before'` answers with the fault instead of handling the request (nothing changes on the
 * server); `phase: 'after'` handles the request (a claim is created, a credit posted) and then
 * replaces the answer with the fault, which is how a lost response is emulated.
 */
export const FaultRuleSchema = z.strictObject({
  method: z.string().min(1).optional(),
  /** A path prefix (`/v1/orders`) or a RegExp source string wrapped in slashes (`/^\/v1\/orders$/`). */
  path: z.string().min(1),
  phase: z.enum(['before', 'after']).optional(),
  /** Answer with this status (429, 500, 502, 503, ...). */
  status: z.number().int().min(100).max(599).optional(),
  /** Seconds for the Retry-After header, with status 429 or 503. */
  retryAfter: z.number().nonnegative().optional(),
  /** Delay before answering, in milliseconds (combine with a client timeout to emulate a timeout). */
  latencyMs: z.number().nonnegative().optional(),
  /** Destroy the socket instead of answering. */
  drop: z.boolean().optional(),
  /** Probability 0..1 that a matching request is hit (default 1). */
  rate: z.number().min(0).max(1).optional(),
  /** Let this many matching requests through untouched before the rule starts applying. */
  after: z.number().int().nonnegative().optional(),
  /** Apply to at most this many requests, then the rule is spent. */
  count: z.number().int().nonnegative().optional(),
});
export type FaultRule = z.infer<typeof FaultRuleSchema>;

interface ActiveRule {
  rule: FaultRule;
  regex: RegExp | null;
  seen: number;
  applied: number;
}

const REGEX_META = /[\^$*+?()[\]{}|\\]/;

/**
 * A path wrapped in slashes that holds a regex metacharacter is a RegExp source; anything else is a
 * prefix, so `/v1/orders/` stays a prefix.
 */
function toRegex(path: string): RegExp | null {
  if (path.length > 2 && path.startsWith('/') && path.endsWith('/') && REGEX_META.test(path.slice(1, -1))) {
    return new RegExp(path.slice(1, -1));
  }
  return null;
}

/** The fault rules of one sandbox. */
export function createFaults() {
  let active: ActiveRule[] = [];
  return {
    /** Replaces the rules (and their counts). */
    set(rules: FaultRule[]): void {
      active = rules.map((rule) => ({ rule: { ...rule }, regex: toRegex(rule.path), seen: 0, applied: 0 }));
    },
    /** The rule that hits this request, if any; counts the hit. */
    pick(method: string, path: string): FaultRule | null {
      for (const a of active) {
        const { rule } = a;
        if (rule.method && rule.method.toUpperCase() !== method) continue;
        if (a.regex ? !a.regex.test(path) : !path.startsWith(rule.path)) continue;
        if (rule.count !== undefined && a.applied >= rule.count) continue;
        a.seen++;
        if (a.seen <= (rule.after ?? 0)) continue;
        if (rule.rate !== undefined && rule.rate < 1 && Math.random() >= rule.rate) continue;
        a.applied++;
        return rule;
      }
      return null;
    },
  };
}

export type Faults = ReturnType<typeof createFaults>;
