/**
 * Every place a record lived is read once (src/config/record-dir.ts earlierPlaces): two names of one
 * folder, such as `D:\Team` and `d:\team` on Windows or a link to it anywhere, are one place.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { earlierPlaces } from '../../src/config/record-dir.js';
import { rememberPlace } from '../../src/record/witness.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function layout() {
  const root = mkdtempSync(join(tmpdir(), 'opcli-places-'));
  roots.push(root);
  const configDir = join(root, 'config');
  const team = join(root, 'team');
  mkdirSync(configDir, { mode: 0o700 });
  mkdirSync(team, { mode: 0o700 });
  const other = join(root, 'other-name');
  symlinkSync(team, other);
  return { configDir, team, other };
}

it('the folder in use under another name is not an earlier place', () => {
  const { configDir, team, other } = layout();
  rememberPlace(configDir, join(other, 'ledger.jsonl'));
  const places = earlierPlaces({ dir: team, configDir });
  expect(places.map((p) => p.dir)).toEqual([resolve(configDir)]);
});

it('an earlier place known under two names is read once', () => {
  const { configDir, team, other } = layout();
  rememberPlace(configDir, join(team, 'ledger.jsonl'));
  rememberPlace(configDir, join(other, 'ledger.jsonl'));
  const places = earlierPlaces({ dir: configDir, configDir });
  expect(places).toHaveLength(1);
  expect([team, other]).toContain(places[0]?.dir);
});
