/**
 * Nothing out of date: every relative link in the hand-written docs points at a file that exists and,
 * with a #fragment, at a heading it has; every CHOICE comment in src/ links to its anchor in
 * docs/spec-choices.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';

/** The anchor GitHub gives a heading. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a markdown file: one per heading, plus explicit `<a id>` / `<a name>`. */
function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  const found = new Set<string>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+)$/gm)) found.add(anchorOf(m[1] as string));
  for (const m of text.matchAll(/<a (?:id|name)="([^"]+)"/g)) found.add(m[1] as string);
  return found;
}

/** Markdown files written by hand (the generated reference is checked by its own test). */
function handWritten(): string[] {
  const files = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'ARCHITECTURE.md'].map((f) => join(ROOT, f));
  for (const entry of readdirSync(join(ROOT, 'docs'), { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && entry.name.endsWith('.md') && !path.includes('/_incoming/')) files.push(path);
  }
  return files.filter((f) => existsSync(f));
}

/**
 * Guides other engineers are writing at the same time; a link to one is checked once it exists.
 * Empty this list when they have landed.
 */
const PENDING = new Set<string>([]);

describe('links in the docs', () => {
  it('every relative link and anchor resolves', () => {
    const broken: string[] = [];
    for (const file of handWritten()) {
      const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1] as string;
        if (/^[a-z]+:/i.test(link)) continue;
        const [path, fragment] = link.split('#') as [string, string | undefined];
        const target = path ? join(dirname(file), path) : file;
        const rel = relative(ROOT, target);
        if (!existsSync(target)) {
          if (!PENDING.has(rel)) broken.push(`${relative(ROOT, file)}: ${link} (no such file)`);
          continue;
        }
        if (fragment && target.endsWith('.md') && !anchors(target).has(fragment)) broken.push(`${relative(ROOT, file)}: ${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every CHOICE comment in src/ links to its anchor in docs/spec-choices.md', () => {
    const known = anchors(join(ROOT, 'docs', 'spec-choices.md'));
    const problems: string[] = [];
    for (const entry of readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(entry.parentPath, entry.name);
      for (const [i, line] of readFileSync(path, 'utf8').split('\n').entries()) {
        if (!/\bCHOICE\b(?!")/.test(line)) continue;
        const m = /CHOICE \(docs\/spec-choices\.md#([\w-]+)\)/.exec(line);
        const where = `${relative(ROOT, path)}:${i + 1}`;
        if (!m) problems.push(`${where}: write it as "CHOICE (docs/spec-choices.md#<anchor>): ..."`);
        else if (!known.has(m[1] as string)) problems.push(`${where}: docs/spec-choices.md has no heading for #${m[1]}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('keeps the README short and pointing into docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    for (const page of [
      'docs/guides/developer.md',
      'docs/guides/configuration.md',
      'docs/guides/sandbox.md',
      'docs/exit-codes.md',
      'docs/http.md',
      'docs/spec-choices.md',
      'docs/benchmarks.md',
      'docs/reference/README.md',
    ]) {
      expect(readme).toContain(`](${page})`);
    }
    for (const step of ['npm ci && npm start', 'npm ci && npm test', 'npx opcli', 'npm i -g opcli', '.tgz']) expect(readme).toContain(step);
  });

  it('makes anchors as GitHub does', () => {
    expect(anchorOf('Possible double credit exits 0')).toBe('possible-double-credit-exits-0');
    expect(anchorOf('`opcli api` and --json')).toBe('opcli-api-and---json');
    expect(anchorOf('What is resent, and what never is')).toBe('what-is-resent-and-what-never-is');
  });
});
