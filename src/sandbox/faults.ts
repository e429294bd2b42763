import * as z from 'zod';

/**
 * A fault rule, matched in order against method and path; the first that applies wins. `before`
 * answers with the fault instead of handling the request; `after` handles it, then replaces the
 * answer with the fault: a lost response.
 */
export const FaultRuleSchema = z.strictObject({
  method: z.string().min(1).optional(),
  /** A path prefix (`/v1/orders`) or a RegExp source string wrapped in slashes (`/^\/v1\/orders$/`). */
  path: z.string().min(1),
  phase: z.enum(['before', 'after']).optional(),
  status: z.number().int().min(100).max(599).optional(),
  /** Seconds, for Retry-After. */
  retryAfter: z.number().nonnegative().optional(),
  /** Before answering (with a client timeout, a timeout). */
  latencyMs: z.number().nonnegative().optional(),
  /** Destroy the socket instead of answering. */
  drop: z.boolean().optional(),
  /** Probability that a matching request is hit (default 1). */
  rate: z.number().min(0).max(1).optional(),
  /** Matching requests let through before the rule applies. */
  after: z.number().int().nonnegative().optional(),
  /** Requests it applies to at most. */
  count: z.number().int().nonnegative().optional(),
});
export type FaultRule = z.infer<typeof FaultRuleSchema>;

const REGEX_META = /[\^$*+?()[\]{}|\\]/;

/** A path wrapped in slashes with a regex metacharacter is a RegExp source; else a prefix (`/v1/orders/` stays one). */
function toRegex(path: string): RegExp | null {
  if (path.length > 2 && path.startsWith('/') && path.endsWith('/') && REGEX_META.test(path.slice(1, -1))) {
    return new RegExp(path.slice(1, -1));
  }
  return null;
}

export function createFaults() {
  let active: { rule: FaultRule; regex: RegExp | null; seen: number; applied: number }[] = [];
  return {
    set(rules: FaultRule[]): void {
      active = rules.map((rule) => ({ rule: { ...rule }, regex: toRegex(rule.path), seen: 0, applied: 0 }));
    },
    /** The rule that hits this request, counted. */
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
