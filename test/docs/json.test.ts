/**
 * docs/json.md against real output: for each command it names, the fields it lists are the names the
 * command accepts after --json (the list its error prints), every field the command prints against
 * the sandbox is on the page, and a field list prints only those fields.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite } from '../giftcard/fixture.js';
import { profileSuite, runOpcli } from '../helpers.js';

const PAGE = readFileSync(join(import.meta.dirname, '../../docs/json.md'), 'utf8');

/** The names listed after "Fields:" in the page's section for `command`. */
function documented(command: string): string[] {
  const start = PAGE.indexOf(`## \`opcli ${command}\``);
  expect(start, `docs/json.md has a section for opcli ${command}`).toBeGreaterThan(0);
  const section = PAGE.slice(start, PAGE.indexOf('\n## ', start + 1) >>> 0 || undefined);
  const fields = /\nFields: ([\s\S]*?)\.\n/.exec(section)?.[1] ?? '';
  return [...fields.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
}

/** The names a command's error lists for a wrong --json field. */
async function accepted(argv: string[], env: Record<string, string>, options: Parameters<typeof runOpcli>[1] = {}): Promise<string[]> {
  const r = await runOpcli([...argv, '--json', 'noSuchField'], { env, ...options });
  expect(r.code, r.stderr).toBe(2);
  // With --json the error is JSON too: { error: { message, hint } }.
  const error = JSON.parse(r.stderr).error as { message: string; hint: string };
  expect(error.message).toContain('--json: unknown field "noSuchField"');
  const list = /Valid fields: (.*)\./.exec(error.hint)?.[1] ?? '';
  return list.split(', ');
}

let sandbox: Sandbox;
let env: Record<string, string>;
profileSuite(
  (s) => {
    ({ sandbox, env } = s);
  },
  { sandbox: { orders: 30 } },
);
giftcardSuite();

describe('docs/json.md holds what each command prints', () => {
  it('orders list: --json and --jsonl, whole records and chosen fields', async () => {
    const names = documented('orders list');
    expect(await accepted(['orders', 'list'], env)).toEqual(names);
    const whole = await runOpcli(['orders', 'list', '--size', '30', '--json'], { env });
    expect(whole.code, whole.stderr).toBe(0);
    const records = JSON.parse(whole.stdout) as Record<string, unknown>[];
    expect(records.length).toBeGreaterThan(0);
    const printed = new Set(records.flatMap((o) => Object.keys(o)));
    expect([...printed].filter((k) => !names.includes(k))).toEqual([]);
    const some = await runOpcli(['orders', 'list', '--size', '30', '--json', 'total,sourceOrderId'], { env });
    expect(some.code, some.stderr).toBe(0);
    const picked = JSON.parse(some.stdout) as Record<string, unknown>[];
    expect(picked.map((o) => Object.keys(o))).toEqual(records.map(() => ['total', 'sourceOrderId']));
    expect(picked.map((o) => o.sourceOrderId)).toEqual(records.map((o) => o.sourceOrderId));
    const lines = await runOpcli(['orders', 'list', '--size', '30', '--jsonl', 'sourceOrderId'], { env });
    expect(
      lines.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(records.map((o) => ({ sourceOrderId: o.sourceOrderId })));
    const wrong = await runOpcli(['orders', 'list', '--jsonl', 'sourceOrderId,totl'], { env });
    expect(wrong.code).toBe(2);
    expect(JSON.parse(wrong.stderr).error.message).toBe('--jsonl: unknown field "totl"; did you mean total?');
    expect(sandbox.requests.filter((r) => r.path === '/v1/orders')).toHaveLength(3);
  });

  it('session verify: the context, and a token still read after a bare --json', async () => {
    const names = documented('session verify');
    const base = { ...env, OPCLI_BASE_URL: sandbox.url };
    expect(await accepted(['session', 'verify', '--stdin'], base, { stdin: 'x\n' })).toEqual(names);
    const whole = await runOpcli(['session', 'verify', '--stdin', '--json'], { env: base, stdin: `${sandbox.mintSessionToken()}\n` });
    expect(whole.code, whole.stderr).toBe(0);
    expect(Object.keys(JSON.parse(whole.stdout)).filter((k) => !names.includes(k))).toEqual([]);
    const some = await runOpcli(['session', 'verify', '--stdin', '--json', 'storeId,email'], { env: base, stdin: `${sandbox.mintSessionToken()}\n` });
    expect(JSON.parse(some.stdout)).toEqual({ storeId: sandbox.store.storeId, email: 'merchant@example.com' });
    const argument = await runOpcli(['session', 'verify', '--json', sandbox.mintSessionToken()], { env: base });
    expect(argument.code, argument.stderr).toBe(0);
    expect(JSON.parse(argument.stdout).storeId).toBe(sandbox.store.storeId);
  });

  it('claims history', async () => {
    const names = documented('claims history');
    expect(await accepted(['claims', 'history'], env)).toEqual(names);
    const template = await runOpcli(['claims', 'template', '--json'], { env });
    const filed = await runOpcli(['claims', 'file', '--data', '-', '--json'], { env, stdin: template.stdout });
    expect(filed.code, filed.stderr).toBe(0);
    const sourceOrderId = JSON.parse(filed.stdout).sourceOrderId as string;
    const whole = await runOpcli(['claims', 'history', '--json'], { env });
    expect(whole.code, whole.stderr).toBe(0);
    const claims = JSON.parse(whole.stdout).claims as Record<string, unknown>[];
    expect(claims.length).toBeGreaterThan(0);
    expect([...new Set(claims.flatMap((c) => Object.keys(c)))].filter((k) => !names.includes(k))).toEqual([]);
    const some = await runOpcli(['claims', 'history', '--json', 'sourceOrderId,status'], { env });
    expect(JSON.parse(some.stdout).claims).toContainEqual({ sourceOrderId, status: 'filed' });
  });

  it('config list', async () => {
    const names = documented('config list');
    expect(await accepted(['config', 'list'], env)).toEqual(names);
    const whole = await runOpcli(['config', 'list', '--json'], { env });
    expect(whole.code, whole.stderr).toBe(0);
    const settings = JSON.parse(whole.stdout).settings as Record<string, unknown>[];
    expect([...new Set(settings.flatMap((s) => Object.keys(s)))].filter((k) => !names.includes(k))).toEqual([]);
    const some = await runOpcli(['config', 'list', '--json', 'key,source'], { env });
    const picked = JSON.parse(some.stdout).settings as Record<string, unknown>[];
    expect(picked.find((s) => s.key === 'base-url')).toEqual({ key: 'base-url', source: 'profile' });
  });

  it('profiles list', async () => {
    const names = documented('profiles list');
    expect(await accepted(['profiles', 'list'], env)).toEqual(names);
    const whole = await runOpcli(['profiles', 'list', '--json'], { env });
    expect(Object.keys(JSON.parse(whole.stdout)[0])).toEqual(names);
    const some = await runOpcli(['profiles', 'list', '--json', 'loggedIn,name'], { env });
    expect(JSON.parse(some.stdout)).toEqual([{ loggedIn: true, name: 'default' }]);
  });

  it('giftcard history', async () => {
    const fx: Fixture = await fixture({ unset: ['trigger-id'] });
    const names = documented('giftcard history');
    expect(await accepted(['giftcard', 'history'], fx.env)).toEqual(names);
    expect((await fx.run(aliceClaim('C-40'))).code).toBe(0);
    const whole = await fx.run(['giftcard', 'history', '--json']);
    expect(whole.code, whole.stderr).toBe(0);
    const doc = JSON.parse(whole.stdout);
    expect(Object.keys(doc.issuances[0])).toEqual(names);
    const some = await fx.run(['giftcard', 'history', '--json', 'claimId,amount']);
    expect(JSON.parse(some.stdout).issuances).toEqual([{ claimId: 'C-40', amount: '25.00' }]);
  });

  it('claims file --from --jsonl: each row, whole or chosen fields, and the summary line', async () => {
    const names = documented('claims file');
    const dir = mkdtempSync(join(tmpdir(), 'opcli-json-'));
    try {
      const template = await runOpcli(['claims', 'template', '--csv'], { env });
      const [header, example] = template.stdout.trimEnd().split('\n') as [string, string];
      const csv = join(dir, 'claims.csv');
      const rows = [1, 2, 3].map((i) => example.replace('249.99', i === 2 ? 'cheap' : `${100 + i}.00`).replace('Pump stopped working', `JSON row ${i}`));
      writeFileSync(csv, `${header}\n${rows.join('\n')}\n`);
      const wrong = await runOpcli(['claims', 'file', '--from', csv, '--jsonl', 'line,noSuchField'], { env });
      expect(wrong.code).toBe(2);
      const error = JSON.parse(wrong.stderr).error as { message: string; hint: string };
      expect(error.message).toBe('--jsonl: unknown field "noSuchField".');
      expect(/Valid fields: (.*)\./.exec(error.hint)?.[1]?.split(', ')).toEqual(names);
      expect(existsSync(`${csv}.journal.jsonl`)).toBe(false);
      const whole = await runOpcli(['claims', 'file', '--from', csv, '--jsonl'], { env });
      expect(whole.code, whole.stderr).toBe(3);
      const lines = whole.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.at(-1)).toHaveProperty('summary');
      const results = lines.slice(0, -1);
      expect(results).toHaveLength(3);
      expect([...new Set(results.flatMap((r) => Object.keys(r)))].filter((k) => !names.includes(k))).toEqual([]);
      // The rerun reports each row again (filed earlier, or invalid), with only the chosen fields.
      const some = await runOpcli(['claims', 'file', '--from', csv, '--jsonl', 'status,line,sourceOrderId'], { env });
      const picked = some.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(picked.slice(0, -1)).toEqual(results.map((r) => ({ status: r.status, line: r.line, sourceOrderId: r.sourceOrderId ?? null })));
      expect(picked.at(-1)).toHaveProperty('summary');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('giftcard issue --json: the issued card, whole or chosen fields', async () => {
    const fx: Fixture = await fixture({ unset: ['trigger-id'] });
    const names = documented('giftcard issue');
    const before = fx.sandbox.requests.length;
    const wrong = await fx.run([...aliceClaim('C-50'), '--json', 'cardId,amout']);
    expect(wrong.code).toBe(2);
    const error = JSON.parse(wrong.stderr).error as { message: string; hint: string };
    expect(error.message).toBe('--json: unknown field "amout"; did you mean amount?');
    expect(/Valid fields: (.*)\./.exec(error.hint)?.[1]?.split(', ')).toEqual(names);
    expect(fx.sandbox.requests.length).toBe(before);
    const dry = await fx.run([...aliceClaim('C-50'), '--dry-run', '--json', 'cardId']);
    expect(dry.code).toBe(2);
    expect(JSON.parse(dry.stderr).error.message).toContain('a dry run prints its plan whole');
    const whole = await fx.run([...aliceClaim('C-50'), '--json']);
    expect(whole.code, whole.stderr).toBe(0);
    expect(Object.keys(JSON.parse(whole.stdout))).toEqual(names);
    const some = await fx.run([...aliceClaim('C-51', [], '7.50'), '--json', 'amount,currency,claimId']);
    expect(some.code, some.stderr).toBe(0);
    expect(JSON.parse(some.stdout)).toEqual({ amount: '7.50', currency: 'USD', claimId: 'C-51' });
  });
});
