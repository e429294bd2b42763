/**
 * One claim row through the real send pipeline, its stages traced in call order at each module's
 * door (reader, planner, record of claims, the HTTP core, the tally, the display): each stage
 * once, in order read → check → key → record → send → settle → report, none returned to.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createAdaptiveLimiter } from '../../src/http/adaptive.js';
import { BatchTally, SendPipeline } from '../../src/claims/pipeline.js';
import { Planner } from '../../src/claims/plan.js';
import { openSource } from '../../src/claims/reader.js';
import { ClaimRecord } from '../../src/claims/record.js';
import { historyOf } from '../../src/claims/batch.js';
import { recordPlace } from '../../src/config/record-dir.js';
import { batchView } from '../../src/commands/claims/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimsSuite, writeRows } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

const LINE = 2;
const trace: string[] = [];
const stages: string[] = [];
/** Notes a stage of the traced row at the module door (named) where it was seen. */
function log(stage: string, door: string, line: number | undefined) {
  if (line !== LINE) return;
  stages.push(stage);
  trace.push(`${stage.padEnd(13)} ${door}`);
}

it('one row passes read, check, key, record, send, settle and report, each once and in that order', async () => {
  void sandbox;
  const path = join(dir, 'claims.csv');
  writeRows(path, 3);
  const { deps } = await runOpcli(['--version'], { env: env() });
  const profile = await deps.profile();
  const source = await openSource(createReadStream(path), 'csv', { defaultStoreId: profile.storeId, label: path });
  const rows = source.rows;
  source.rows = (async function* () {
    for (;;) {
      const next = await rows.next();
      if (next.done) return;
      log('read', 'claims/reader.ts rows()', next.value.line);
      yield next.value;
    }
  })();
  const record = await ClaimRecord.open({
    place: recordPlace(deps.configDir(), profile),
    store: { origin: null, storeId: profile.storeId ?? null },
    lock: { waitMs: 1000 },
  });
  const planner = new Planner(historyOf(record, `${path}.journal.jsonl`), {
    allowSimilar: false,
    retryUncertain: false,
    record,
    tokenStore: profile.storeId,
    provenance: { source: path, profile: 'default', journal: `${path}.journal.jsonl` },
  });
  const plan = planner.plan.bind(planner);
  planner.plan = (row) => {
    log('check and key', 'claims/plan.ts Planner.plan', row.line);
    return plan(row);
  };
  const rIntents = record.intentsDurable.bind(record);
  record.intentsDurable = (lines, now) => {
    for (const l of lines) log('record', 'claims/record.ts intentsDurable', l.line);
    return rIntents(lines, now);
  };
  const rOutcome = record.outcome.bind(record);
  record.outcome = (o, now) => {
    log('settle', `claims/record.ts outcome('${o.status}')`, Number(o.issuance.split('.')[1]));
    rOutcome(o, now);
  };
  // The send door: the claim's request as the HTTP core takes it (the outage probe's GET is not a row's).
  const http = async () => {
    const real = await deps.http();
    return new Proxy(real, {
      get(target, prop, receiver) {
        if (prop !== 'request') return Reflect.get(target, prop, receiver);
        return (req: { method: string; url: string; json?: { item?: { details?: string } } }, schema: unknown) => {
          if (req.method === 'POST' && req.url === '/v1/claims/offline') {
            const line = Number(/row (\d+)/.exec(req.json?.item?.details ?? '')?.[1]) + 1;
            log('send', 'http/client.ts request (POST /v1/claims/offline)', line);
          }
          return target.request(req as never, schema as never);
        };
      },
    });
  };
  const limiter = createAdaptiveLimiter({ maxConcurrency: 1, now: deps.now, sleep: deps.sleep });
  const tally = new BatchTally(deps.now, limiter);
  const tCount = tally.count.bind(tally);
  tally.count = (result) => {
    log('report', 'claims/pipeline.ts BatchTally.count', result.line);
    tCount(result);
  };
  const view = batchView(deps, { json: false, jsonl: true });
  const report = view.report(source, { verb: 'send' }, () => tally.progress());
  const add = report.add.bind(report);
  report.add = (row, result) => {
    log('report', 'commands/claims/index.ts add', row.line);
    return add(row, result);
  };
  await report.start();
  const pipeline = new SendPipeline(
    { concurrency: 1, tokenStore: profile.storeId },
    {
      http,
      now: deps.now,
      sleep: deps.sleep,
      signal: deps.signal,
      stopNow: deps.stopNow,
      record,
      batch: `${path}.journal.jsonl`,
      limiter,
      tally,
      report,
      view,
    },
    planner,
  );
  const result = await pipeline.run(source);
  await record.closeDurable();
  if (process.env.OPCLI_TRACE_ROW) console.log(`One row (line ${LINE}), in call order:\n${trace.join('\n')}`);
  expect(result.fatal).toBeUndefined();
  // Consecutive calls of one stage (the tally and the display) are one stage.
  const order = stages.filter((s, i) => s !== stages[i - 1]);
  expect(order).toEqual(['read', 'check and key', 'record', 'send', 'settle', 'report']);
});
