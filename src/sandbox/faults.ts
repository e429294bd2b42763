/** Fault injection: rules matched in order against method and path, with after/count/rate bookkeeping. */
import * as z from 'zod';
import type { FaultRule } from './types.js';

/** The admin endpoint's schema of a fault rule (FaultRule in types.ts). */
export const FaultRuleSchema = z.strictObject({
  method: z.string().min(1).optional(),
  path: z.string().min(1),
  phase: z.enum(['before', 'after']).optional(),
  status: z.number().int().min(100).max(599).optional(),
  retryAfter: z.number().nonnegative().optional(),
  latencyMs: z.number().nonnegative().optional(),
  drop: z.boolean().optional(),
  rate: z.number().min(0).max(1).optional(),
  after: z.number().int().nonnegative().optional(),
  count: z.number().int().nonnegative().optional(),
});

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
