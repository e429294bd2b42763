// The cases of the Windows smoke test (test/windows/smoke.mjs): one function each, run in order with
// Windows Node under Wine against a sandbox on Linux. A case checks what a user sees (exit code,
// output, files) and what the sandbox received, and throws to fail. To add one, write a function
// and add it to CASES. A case marked `knownBroken` is a bug of today's opcli on Windows: it is
// expected to fail, and the run fails when it passes, so the mark is removed once the fix lands;
// `today` is how it fails today (as the issue says): a case failing another way fails the run too.
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';

/** The required columns of a claims file (docs/guides/batch-claims.md); a valid row for each customer and item, and a file of rows. */
const HEADER =
  'customer.email,item.name,item.price,item.details,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,signature,salesChannel,claimCategory,issueType,resolution';
const row = (email, item) =>
  `${email},${item},49.90,Lid cracked,2024-05-01T10:00:00Z,P1Y,Ana,Silva,1 Main St,Boston,02139,United States,,IN_STORE,WARRANTY,DEFECTIVE_ITEM,RESHIP`;
const csv = (...rows) => `${[HEADER, ...rows].join('\r\n')}\r\n`;

/** Fails the case with what the user saw when `ok` is false. */
function expect(ok, what, run) {
  if (ok) return;
  const seen = run ? `\nexit code ${run.code}\n--- stdout\n${tail(run.stdout)}\n--- stderr\n${tail(run.stderr)}` : '';
  throw new Error(`${what}${seen}`);
}

/** The last lines of an output: where a run says how it ended. */
function tail(text, lines = 30) {
  const all = text.trimEnd().split('\n');
  return all.length > lines ? [`(${all.length - lines} lines before)`, ...all.slice(-lines)].join('\n') : all.join('\n');
}

/** A run ended with `code`, its stdout and stderr matching the patterns given. */
function expectRun(run, code, { stdout = [], stderr = [] } = {}) {
  expect(run.code === code, `expected exit code ${code}`, run);
  for (const re of stdout) expect(re.test(run.stdout), `expected stdout to match ${re}`, run);
  for (const re of stderr) expect(re.test(run.stderr), `expected stderr to match ${re}`, run);
  expect(!/unexpected failure|\n\s+at .+:\d+:\d+\)?\n/.test(run.stdout + run.stderr), 'expected no stack trace and no "unexpected failure"', run);
}

/** The tour: a sandbox of its own in the Windows process, every command against it. */
async function tour(t) {
  const run = await t.opcli(['demo']);
  expectRun(run, 0, { stderr: [/The tour is over\./] });
}

/** A profile set up as the configuration guide says: settings, the secret from a file, a login, the provider. */
async function profile(t) {
  const s = t.sandbox.info;
  for (const [key, value] of [
    ['base-url', s.url],
    ['client-id', s.clientId],
    ['store-id', s.storeId],
  ]) {
    expectRun(await t.opcli(['config', 'set', key, value]), 0);
  }
  writeFileSync(t.path('secret.txt'), s.clientSecret);
  writeFileSync(t.path('provider-token.txt'), s.providerToken);
  expectRun(await t.opcli(['config', 'set', 'client-secret', '--from-file', 'secret.txt']), 0);
  expectRun(await t.opcli(['auth', 'login', '--client-credentials']), 0);
  const setup = ['giftcard', 'setup', '--provider-name', s.providerName, '--api-url', s.providerUrl, '--token-from-file', 'provider-token.txt'];
  setup.push('--shop-url', s.shopUrl, '--trigger-id', `${s.triggerUrl}/${s.triggerId}`, '--native-url', s.nativeUrl);
  expectRun(await t.opcli(setup), 0);
  const logins = (await t.sandbox.admin('/requests?path=/v1/oauth/token')).filter((r) => r.method === 'POST');
  expect(logins.length === 1, `expected one token request, the sandbox received ${logins.length}`);
}

/** A batch of three claims is filed; its rerun sends nothing. */
async function batch(t) {
  writeFileSync(t.path('claims.csv'), csv(row('ana@example.com', 'Kettle'), row('ben@example.com', 'Toaster'), row('cleo@example.com', 'Blender')));
  const before = await t.claimsSent();
  const first = await t.opcli(['claims', 'file', '--from', 'claims.csv', '--out', 'results.csv']);
  expectRun(first, 0, { stderr: [/^Filed 3 claims; 0 rejected by the API, 0 invalid/m] });
  expect((await t.claimsSent()) === before + 3, `expected 3 claims sent, the sandbox received ${(await t.claimsSent()) - before}`, first);
  const filed = (await t.sandbox.admin('/claims')).map((c) => c.payload.customer?.email);
  for (const email of ['ana@example.com', 'ben@example.com', 'cleo@example.com']) expect(filed.includes(email), `expected a claim for ${email} in the sandbox`);
  const results = readFileSync(t.path('results.csv'), 'utf8');
  expect((results.match(/,filed,/g) ?? []).length === 3, `expected 3 rows "filed" in results.csv:\n${results}`);

  const rerun = await t.opcli(['claims', 'file', '--from', 'claims.csv']);
  expectRun(rerun, 0, { stderr: [/Settled by an earlier run, not sent again: 3 filed/] });
  expect((await t.claimsSent()) === before + 3, 'expected the rerun to send nothing', rerun);
}

const issue = ['giftcard', 'issue', '--claim', 'C-1001', '--order', '1001', '--amount', '25.00'];
issue.push('--email', 'alice@example.com', '--name', 'Alice Example', '--customer-id', 'cust_1001', '--yes');

/** Store credit for a claim is paid; paying the same claim again is held, and nothing is sent. */
async function giftCard(t) {
  const paid = await t.opcli(issue);
  expectRun(paid, 0, { stdout: [/Amount\t25\.00 USD/], stderr: [/Issued 25\.00 USD for claim C-1001 to Alice Example <alice@example\.com>/] });
  const provider = (await t.sandbox.admin('/requests?path=/provider')).length;
  expect(provider > 0, 'expected the provider to have been called', paid);

  const again = await t.opcli(issue);
  expectRun(again, 3, { stderr: [/already issued/, /Nothing was sent/] });
  expect((await t.sandbox.admin('/requests?path=/provider')).length === provider, 'expected nothing sent to the provider the second time', again);
}

/** The sandbox holds the answer to the next claim for 10 minutes (a fault rule): a run waits on it, its locks held. */
function holdNextClaim(t) {
  return t.sandbox.admin('/faults', { method: 'PUT', body: [{ method: 'POST', path: '/v1/claims', latencyMs: 600_000, count: 1 }] });
}

/** Waits until the sandbox has received the claim of `batch` (a launched run), held by a fault: more than `before` claims. */
async function claimInFlight(t, batch, before) {
  let ended;
  batch.exited.then((run) => (ended = run));
  while ((await t.claimsSent()) === before) {
    expect(!ended, 'expected the batch to send a claim and wait for its answer', ended);
    await sleep(100);
  }
}

/**
 * Ctrl-C in the middle of a batch, as on Linux: the claim in flight is uncertain, the run exits 130,
 * and the same command again files the row not sent yet without sending the uncertain one again.
 */
async function ctrlC(t) {
  writeFileSync(t.path('stop.csv'), csv(row('gus@example.com', 'Fan'), row('hal@example.com', 'Iron')));
  await holdNextClaim(t);
  const before = await t.claimsSent();
  const batch = t.launchOpcli(['claims', 'file', '--from', 'stop.csv', '--concurrency', '1']);
  try {
    await claimInFlight(t, batch, before);
    batch.interrupt();
    expectRun(await batch.exited, 130);
  } finally {
    batch.kill();
    await t.sandbox.admin('/faults', { method: 'PUT', body: [] }); // no more faults
  }
  expect((await t.claimsSent()) === before + 1, 'expected the second row not sent after Ctrl-C');
  const rerun = await t.opcli(['claims', 'file', '--from', 'stop.csv']);
  expectRun(rerun, 3, { stderr: [/^Filed 1 claim/m, /1 uncertain/] });
  expect((await t.claimsSent()) === before + 2, 'expected the rerun to send the second row only', rerun);
}

/** Issue 43 row 1: `--journal Run.jsonl --out run.jsonl` name one file on Windows: refused, nothing sent. */
async function journalAndOutCase(t) {
  writeFileSync(t.path('c.csv'), csv(row('dan@example.com', 'Kettle')));
  const before = await t.claimsSent();
  const run = await t.opcli(['claims', 'file', '--from', 'c.csv', '--journal', 'Run.jsonl', '--out', 'run.jsonl']);
  expectRun(run, 2, { stderr: [/--journal/, /--out/] });
  expect((await t.claimsSent()) === before, 'expected nothing sent', run);
}

/** Issue 43 row 2: Windows environment names are case-insensitive: `opcli_profile=zzz` is OPCLI_PROFILE. */
async function envNameCase(t) {
  const before = (await t.sandbox.admin('/requests?path=/v1/orders')).length;
  const run = await t.opcli(['orders', 'list', '--json'], { env: { opcli_profile: 'zzz' } });
  expectRun(run, 2, { stderr: [/zzz/] });
  expect((await t.sandbox.admin('/requests?path=/v1/orders')).length === before, 'expected no request (profile zzz does not exist)', run);
}

/**
 * Issue 43 row 3: a batch is killed while it holds its locks (its claim sent, the answer not yet
 * back), and Windows gives its pid to another live process (here a Windows Node that only waits:
 * the pid in each lock's owner record is made that process's). The same command again takes the
 * locks instead of waiting for a run that is gone, and does not send the uncertain claim again.
 */
async function reusedPidLock(t) {
  writeFileSync(t.path('slow.csv'), csv(row('erin@example.com', 'Lamp')));
  const where = await t.opcli(['config', 'path', '--json']);
  expectRun(where, 0);
  const configDir = t.machine.linuxPath(JSON.parse(where.stdout).dir);
  await holdNextClaim(t);
  const before = await t.claimsSent();
  // OPCLI_LEAN=1 marks the shim's own child (bin/opcli.cjs, duty 2): the batch runs in this one process.
  const batch = t.launchOpcli(['claims', 'file', '--from', 'slow.csv'], { env: { OPCLI_LEAN: '1' } });
  try {
    await claimInFlight(t, batch, before);
  } finally {
    batch.kill();
    await batch.exited;
    await t.sandbox.admin('/faults', { method: 'PUT', body: [] }); // no more faults
  }
  const other = await t.otherProcess();
  try {
    const owners = [t.path('.'), configDir].flatMap(lockOwners);
    expect(owners.length > 0, `expected the killed batch to leave its locks in ${t.path('.')} or ${configDir}`);
    for (const owner of owners) reusePid(owner, other.pid);
    const rerun = await t.opcli(['claims', 'file', '--from', 'slow.csv']);
    expectRun(rerun, 3, { stderr: [/1 uncertain/] });
    expect((await t.claimsSent()) === before + 1, 'expected the uncertain claim not sent again', rerun);
  } finally {
    other.stop();
  }
}

/** The owner records of the locks (folders named *.lock) in `dir` and below. */
function lockOwners(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name.endsWith('.lock') && existsSync(join(e.parentPath, e.name, 'owner')))
    .map((e) => join(e.parentPath, e.name, 'owner'));
}

/** The owner record made to name `pid`, everything else (its time included) as the run wrote it. */
function reusePid(ownerFile, pid) {
  const { atime, mtime } = statSync(ownerFile);
  writeFileSync(ownerFile, JSON.stringify({ ...JSON.parse(readFileSync(ownerFile, 'utf8')), pid }));
  utimesSync(ownerFile, atime, mtime);
}

/** Issue 43 row 6: PowerShell 5.1's `opcli claims template --csv > claims.csv` writes UTF-16LE; the file is read. */
async function utf16Template(t) {
  const template = await t.opcli(['claims', 'template', '--csv']);
  expectRun(template, 0);
  // What PowerShell 5.1's `>` does with a program's output: lines joined with CRLF, UTF-16LE with a BOM.
  const lines = template.stdout.replaceAll('your-store-id', t.sandbox.info.storeId).split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  writeFileSync(t.path('template.csv'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf16le')]));
  const before = await t.claimsSent();
  const run = await t.opcli(['claims', 'file', '--from', 'template.csv']);
  expectRun(run, 0);
  expect((await t.claimsSent()) === before + 1, 'expected the example claim sent', run);
  const last = (await t.sandbox.admin('/claims')).at(-1);
  expect(
    last?.payload.item?.name === 'Espresso machine, stainless',
    `expected the template's item, the sandbox received ${JSON.stringify(last?.payload.item)}`,
  );
}

/**
 * Issue 43 row 9: a second batch on a file another run is filing is refused, and the way out it
 * names is Windows' own (PowerShell's Remove-Item), not POSIX advice (`rm -r`, `chmod`, `mkdir -m`).
 */
async function heldByHint(t) {
  writeFileSync(t.path('busy.csv'), csv(row('finn@example.com', 'Radio')));
  await holdNextClaim(t);
  const before = await t.claimsSent();
  const first = t.launchOpcli(['claims', 'file', '--from', 'busy.csv']);
  try {
    await claimInFlight(t, first, before);
    const second = await t.opcli(['claims', 'file', '--from', 'busy.csv']);
    // The record's lock is the batch's one lock (issue 40: no journal): refused with exit 3, nothing sent.
    expectRun(second, 3, { stderr: [/Another opcli run is filing claims for this store/, /Remove-Item/] });
    expect(!/`(rm|chmod|mkdir) /.test(second.stderr), 'expected no POSIX command in the advice', second);
  } finally {
    first.kill();
    await first.exited;
    await t.sandbox.admin('/faults', { method: 'PUT', body: [] }); // no more faults
  }
}

/** Issue 43 row 4: the config folder is in %APPDATA%, as gh keeps its own, and `config path` prints it with Windows' separators. */
async function configInAppData(t) {
  const appData = await t.node(['-e', 'console.log(process.env.APPDATA)']);
  const where = await t.opcli(['config', 'path', '--json']);
  expectRun(where, 0);
  const dir = JSON.parse(where.stdout).dir;
  expect(dir === `${appData.stdout.trim()}\\opcli`, `expected the config folder %APPDATA%\\opcli (${appData.stdout.trim()}\\opcli), got ${dir}`, where);
}

/** In order: the profile comes before the cases that use it. */
export const CASES = [
  { name: 'the tour (opcli demo)', run: tour },
  { name: 'a profile: config set, client secret from a file, login, gift card setup', run: profile },
  { name: 'a batch of 3 claims, and its rerun sends nothing', run: batch },
  { name: 'a gift card, and the same claim again is held', run: giftCard },
  { name: 'Ctrl-C mid-batch: exit 130, and the rerun sends only what was not sent', run: ctrlC },
  {
    name: 'issue 43 row 1: --journal Run.jsonl --out run.jsonl is refused',
    run: journalAndOutCase,
  },
  {
    name: 'issue 43 row 2: opcli_profile is OPCLI_PROFILE',
    run: envNameCase,
  },
  {
    name: 'issue 43 row 3: the locks of a killed batch whose pid was reused are taken',
    run: reusedPidLock,
  },
  {
    name: 'issue 43 row 4: the config folder is %APPDATA%\\opcli',
    run: configInAppData,
  },
  {
    name: 'issue 43 row 9: a held journal names the way out in PowerShell',
    run: heldByHint,
  },
  {
    name: 'issue 43 row 6: a UTF-16LE CSV from PowerShell is read',
    run: utf16Template,
  },
];
