/**
 * The command `orders list` prints for the next page (or to resume after a failure) runs as pasted
 * into a shell and keeps the user's flags: the field list of --json/--jsonl, --size, --profile.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli, sandboxProfile } from '../helpers.js';
import { orderGets } from './reading.js';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
profileSuite((s) => ({ sandbox, dir, env } = s), { sandbox: { orders: 40 } });

/** The arguments bash gives `opcli` when the printed line is pasted as it is (a function named opcli prints them). */
function pasted(line: string): string[] {
  const r = spawnSync('bash', ['-c', `opcli() { printf '%s\\0' "$@"; }\n${line}`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

/** The command a footer names after `label`. */
function hint(stderr: string, label: string): string {
  const line = new RegExp(`^${label}: (opcli .*)$`, 'm').exec(stderr)?.[1];
  expect(line, stderr).toBeDefined();
  return line as string;
}

describe('orders list: the next-page command', () => {
  test('keeps the --json field list and --size, and pasted into bash lists the next page with the same fields', async () => {
    const r = await runOpcli(['orders', 'list', '--size', '3', '--json', 'sourceOrderId,total'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).map((o: object) => Object.keys(o))).toEqual(Array(3).fill(['sourceOrderId', 'total']));
    const next = hint(r.stderr, 'Next page');
    expect(next).toMatch(/^opcli orders list --size 3 --json sourceOrderId,total --cursor \S+$/);
    const r2 = await runOpcli(pasted(next), { env });
    expect(r2.code, r2.stderr).toBe(0);
    const page = JSON.parse(r2.stdout) as Record<string, unknown>[];
    expect(page.map((o) => o.sourceOrderId)).toEqual(['ord_000004', 'ord_000005', 'ord_000006']);
    expect(page.map((o) => Object.keys(o))).toEqual(Array(3).fill(['sourceOrderId', 'total']));
    expect(orderGets(sandbox).map((g) => g.query.size)).toEqual(['3', '3']);
  });

  test('keeps --jsonl with its fields, --limit and the --profile given, after --limit stops a run', async () => {
    await sandboxProfile(sandbox, dir, { profile: 'shop-b' });
    const r = await runOpcli(['--profile', 'shop-b', 'orders', 'list', '--limit', '4', '--size', '2', '--jsonl', 'total,sourceOrderNumber'], { env });
    expect(r.code, r.stderr).toBe(0);
    const next = hint(r.stderr, 'Next');
    expect(next).toMatch(/^opcli --profile shop-b orders list --limit 4 --size 2 --jsonl total,sourceOrderNumber --cursor \S+$/);
    const r2 = await runOpcli(pasted(next), { env });
    expect(r2.code, r2.stderr).toBe(0);
    const lines = r2.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((o) => o.sourceOrderNumber)).toEqual(['#1005', '#1006', '#1007', '#1008']);
    expect(lines.map((o) => Object.keys(o))).toEqual(Array(4).fill(['total', 'sourceOrderNumber']));
  });
});
