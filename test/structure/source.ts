import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The repository's root and its src/ folder. */
export const root = join(import.meta.dirname, '..', '..');
export const srcDir = join(root, 'src');

/** Every .ts file under src/, as paths relative to the repository root (src/…), sorted. */
export function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(relative(root, path).split('\\').join('/'));
    }
  };
  walk(srcDir);
  return files.sort();
}

/** A source file parsed by TypeScript (syntax only). */
export function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
}
