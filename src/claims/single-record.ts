/**
 * One claim against the record of claims: refused when it (or one for the same customer and item)
 * was filed for this store, unless forced; else its intent is durable under the record's lock
 * before the request leaves. No prompt or print.
 */
import { resolve } from 'node:path';
import { CHECK_ONE_CLAIM } from '../core/claim-check.js';
import { ExitCode, OpcliError, PlainExit } from '../core/errors.js';
import { claimMayExist } from '../record/outcome.js';
import type { ResolvedProfile } from '../config/profile.js';
import { recordPlace } from '../config/record-dir.js';
import type { OfflineClaim } from '../schemas.js';
import { hashOfRobust, itemWords, recordSimilarity, robustJson } from './plan.js';
import { serviceOrigin } from './journal.js';
import { type ClaimsRecord, ClaimRecord, describeHit, newFilingId, openClaimsRecord, type RecordContext, type RecordHit, stateWords } from './record.js';
import { classifyFailure } from './pipeline.js';

/** How long a single claim waits for the record's lock (a batch filing for the same store holds it). */
const RECORD_LOCK_WAIT_MS = 15_000;

/** How often one claim is decided again after other members took the attempt it was about to write (the record database). */
const MAX_RETAKES = 20;

/** What a single claim is checked and recorded with. */
export interface SingleRecordOptions {
  /** `--force`: file it even when the record holds it. */
  force: boolean;
  /** Where the claim came from: `--data <file>`, `prompt` or `flags`. */
  source: string;
  /** Asks the person to confirm the claim (given only on a terminal without --yes); false: nothing is sent. */
  confirm?: () => Promise<boolean>;
}

/** Refuses the claim when the record holds it or a similar one (unless forced). */
async function refuseHeld(record: ClaimsRecord, key: string, sim: string | undefined, claim: OfflineClaim, force: boolean): Promise<void> {
  if (force) return;
  const same = await record.lookup(key);
  if (same && claimMayExist(same.state)) {
    const uncertain = same.state !== 'filed';
    throw new OpcliError(`This claim was already ${stateWords(same.state)} ${describeHit(same)}. Nothing was sent.`, {
      exitCode: ExitCode.partial,
      hint: uncertain
        ? `Its earlier request may have created the claim: ${CHECK_ONE_CLAIM}. --force files it again once you are sure it does not exist.`
        : '`opcli claims history` lists what was filed; --force files it again (a second claim).',
      details: held(same),
    });
  }
  const like = await record.similar(sim, key);
  if (like) {
    throw new OpcliError(
      `A claim for the same customer and item was already ${stateWords(like.state)} ${describeHit(like)}: earlier ${like.intent?.email ?? '?'}, ${like.intent?.item ?? '?'}; this one ${claim.customer.email}, ${itemWords(claim)}. Nothing was sent.`,
      { exitCode: ExitCode.partial, hint: 'Check that it is another claim, then run again with --force to file it.', details: held(like) },
    );
  }
}

function held(hit: RecordHit): Record<string, unknown> {
  return {
    earlier: {
      state: hit.state,
      at: hit.intent?.at,
      profile: hit.intent?.profile,
      user: hit.intent?.user,
      source: hit.intent?.source,
      line: hit.intent?.line,
      sourceOrderId: hit.outcome?.sourceOrderId,
    },
  };
}

/** Checks the claim against the record (exit 3 when held), asks `confirm`, records its intent durably, runs `send`, records the outcome. */
export async function fileRecorded<T extends { sourceOrderId: string }>(
  claim: OfflineClaim,
  profile: ResolvedProfile | undefined,
  deps: { configDir(): string; now(): number; cwd: string; env?: RecordContext['env'] },
  opts: SingleRecordOptions,
  send: () => Promise<T>,
): Promise<T> {
  const place = recordPlace(deps.configDir(), profile);
  const store = { origin: serviceOrigin(profile?.baseUrl), storeId: profile?.storeId ?? null };
  const robust = robustJson(claim);
  const key = hashOfRobust(robust);
  const sim = recordSimilarity(claim);
  // A first look without the lock: nobody is asked to confirm a claim that would be refused.
  const ctx = { env: deps.env ?? process.env, cwd: deps.cwd };
  const peek = await openClaimsRecord(place, profile, ctx, { store });
  // The team's database takes no lock: the record that looked files too (one connection, not two).
  const reuse = !(peek instanceof ClaimRecord);
  try {
    await refuseHeld(peek, key, sim, claim, opts.force);
    if (!reuse) await peek.close();
    // CHOICE (docs/spec-choices.md#declined-confirmation): a plain sentence, exit 1 (130 is Ctrl-C).
    if (opts.confirm && !(await opts.confirm())) throw new PlainExit('Nothing was sent.', ExitCode.declined);
  } catch (error) {
    await peek.close();
    throw error;
  }
  const record = reuse ? peek : await openClaimsRecord(place, profile, ctx, { store, lock: { waitMs: RECORD_LOCK_WAIT_MS } });
  let filing = newFilingId();
  // The lock is held until the outcome is written: each line names the hash of the one before it
  // (src/record/chain.ts), so no other run may append between the intent and the outcome.
  try {
    // The record database takes no lock: an attempt another member committed first is read, and decided on, again.
    for (let tries = 0; ; tries++, filing = newFilingId()) {
      await refuseHeld(record, key, sim, claim, opts.force);
      const intent = {
        issuance: filing,
        key,
        profile: profile?.name ?? 'default',
        source: opts.source,
        sim,
        email: claim.customer.email,
        item: itemWords(claim),
        forced: opts.force || undefined,
      };
      const taken = await record.intents([intent], deps.now());
      if (!taken?.size) break;
      if (tries >= MAX_RETAKES)
        throw new OpcliError(`Other members filed this claim's attempt ${tries + 1} times in a row; nothing was sent.`, { exitCode: ExitCode.partial });
    }
    let result: T;
    try {
      result = await send();
    } catch (error) {
      record.outcome(
        { issuance: filing, key, status: classifyFailure(error).status, error: error instanceof Error ? error.message.split('\n')[0] : undefined },
        deps.now(),
      );
      throw error;
    }
    record.outcome({ issuance: filing, key, status: 'filed', sourceOrderId: result.sourceOrderId }, deps.now());
    return result;
  } finally {
    await record.close();
  }
}

export function singleSource(data: string | undefined, asked: boolean, cwd: string): string {
  if (data) return `--data ${data === '-' ? '-' : resolve(cwd, data)}`;
  return asked ? 'prompt' : 'flags';
}
