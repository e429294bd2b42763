/**
 * The record of an action reaches the disk before the request that can move money leaves, shown in
 * the system calls of the built binary (strace): after the write of the gift card ledger's attempt
 * line (or the claims record's intent), a sync of that file returns, and the folder that got the new
 * file is synced, before the first byte of the money-moving request is written to its socket.
 *
 * On main at 7cac565 every case fails. The gift card cases on the file's sync: the ledger was written
 * and closed, never synced, and the trigger POST / credit-API PUT left (issue 40). The claims cases
 * only on the folder's sync: their intent was already fdatasync'ed before the POST, but the new
 * record's name in its folder was not (a power cut could lose the whole new file).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { writeRows } from '../claims/fixtures.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite } from '../giftcard/fixture.js';
import { type Call, describeCalls, durableBefore, fdPath, firstRequest, straceMissing, traceOpcli } from '../syscall-trace.js';

const missing = straceMissing();

giftcardSuite();

const isLedger = (path: string) => path.endsWith(`/${LEDGER_FILE}`);
const isClaimsRecord = (path: string) => /\/claims-record-[^/]+\.jsonl$/.test(path);

/** Runs `argv` traced and checks the record `file` (whose lines hold `line`) is durable before `request` leaves. */
async function expectDurableBefore(fx: Fixture, argv: string[], request: RegExp, file: (path: string) => boolean, line: string) {
  const run = await traceOpcli(argv, fx.env);
  expect(run.code, run.stderr).toBe(0);
  const { calls } = run;
  const sent = firstRequest(calls, request);
  const shown = describeCalls(
    calls,
    (c: Call) => (fdPath(c.fd).startsWith(fx.dir) && !c.name.startsWith('open')) || c.fd.includes('TCP') || c.name.includes('sync'),
  );
  expect(sent, `no ${request} in the trace:\n${shown}`).toBeDefined();
  const seen = durableBefore(calls, sent as Call, file, fx.dir, line);
  // The action's line was written before the request...
  expect(
    seen.writes.some((w) => w.text.includes(line)),
    shown,
  ).toBe(true);
  // ...and made durable, with the new file's name in its folder, before its first byte left.
  expect(seen.fileSynced, `no sync of the record between the first write of its action's line and the request:\n${shown}`).toBe(true);
  expect(seen.folderSynced, `no sync of the folder ${fx.dir} before the request:\n${shown}`).toBe(true);
}

describe.skipIf(missing !== undefined)('the record is on disk before money moves (strace of the built binary)', () => {
  const attempt = String.raw`\"type\":\"attempt\"`;
  const intent = String.raw`\"type\":\"intent\"`;

  it('giftcard issue, trigger path: the attempt line is synced before the trigger POST', async () => {
    const fx = await fixture();
    await expectDurableBefore(fx, aliceClaim('C-1'), /(?:, |iov_base=)"POST \/provider\/v2\/workflows\/execute\//, isLedger, attempt);
    expect(fx.providerCalls().some((c) => c.startsWith('POST /v2/workflows/execute/'))).toBe(true);
  });

  it('giftcard issue, credit-API path: the attempt line is synced before the credit PUT / POST', async () => {
    const fx = await fixture({ unset: ['trigger-id'] });
    const credit = /(?:, |iov_base=)"(PUT \/provider\/v2\/gift-cards\/|POST \/provider\/v2\/gift-cards\/issue)/;
    await expectDurableBefore(fx, aliceClaim('C-2'), credit, isLedger, attempt);
    expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
  });

  it('claims file, one claim: the intent is synced before the POST', async () => {
    const fx = await fixture();
    const template = await fx.run(['claims', 'template', '--json']);
    const data = join(fx.dir, 'claim.json');
    writeFileSync(data, template.stdout);
    await expectDurableBefore(fx, ['claims', 'file', '--data', data], /(?:, |iov_base=)"POST \/v1\/claims\/offline/, isClaimsRecord, intent);
    expect(fx.sandbox.claims).toHaveLength(1);
  });

  it('claims file --from, a batch: the first intents are synced before the first POST', async () => {
    const fx = await fixture();
    const csv = join(fx.dir, 'claims.csv');
    writeRows(csv, 3);
    await expectDurableBefore(fx, ['claims', 'file', '--from', csv], /(?:, |iov_base=)"POST \/v1\/claims\/offline/, isClaimsRecord, intent);
    expect(fx.sandbox.claims).toHaveLength(3);
  });
});
