/**
 * The ledger's key: what may be paid only once (a claim, or an order's bonus, in one provider shop
 * and one service store), written as its identity, and how two keys compare. The file ledger and the
 * team's record database (ledger-db.ts) find an earlier credit by it.
 */
import { claimIdentity, orderIdentity } from '../core/identity.js';

/**
 * The key that may be paid once: the claim (or the order, for a bonus credit) in one provider shop
 * and one service store, the id as its identity. The same shop is the same money whatever the
 * profile, so profiles that point at one shop and store share a key, and a sandbox profile never
 * blocks the real one.
 */
export function issuanceKey(input: { claimId?: string; orderNumber: string; bonus: boolean }, scope: { shopUrl?: string; storeId?: string }): string {
  const what = input.bonus ? `bonus:${orderIdentity(input.orderNumber)}` : `claim:${claimIdentity(input.claimId ?? '')}`;
  return `shop:${(scope.shopUrl ?? '-').trim().toLowerCase()}|store:${scope.storeId ?? '-'}|${what}`;
}

/** A key split into its scope (none for an old unscoped key) and what it pays for, by identity: `claim:c-2001`. */
export function keyParts(key: string): { scope?: string; what: string } {
  const m = /^(?:(shop:[^|]*\|store:[^|]*)\|)?(claim|bonus):([\s\S]*)$/.exec(key);
  if (!m) return { what: key };
  const id = m[2] === 'bonus' ? orderIdentity(m[3] as string) : claimIdentity(m[3] as string);
  return { scope: m[1], what: `${m[2]}:${id}` };
}

/** Whether two keys are one scope (an old unscoped key is every scope). */
export function sameScope(a: { scope?: string }, b: { scope?: string }): boolean {
  return a.scope === undefined || b.scope === undefined || a.scope === b.scope;
}

/** Whether a recorded key is the same claim or order as `key`, by identity (an old unscoped key matches any scope). */
export function sameKey(recorded: string, key: string): boolean {
  const r = keyParts(recorded);
  const k = keyParts(key);
  return r.what === k.what && sameScope(r, k);
}
