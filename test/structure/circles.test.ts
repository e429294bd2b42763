import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, root, sourceFiles } from './source.js';

/** The src/ files a file imports statically (type-only imports and re-exports included; `import()` not). */
function importsOf(file: string): string[] {
  const source = parse(file);
  const found: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
        ? statement.moduleSpecifier.text
        : undefined;
    if (!specifier?.startsWith('.')) continue;
    const target = relative(root, join(root, dirname(file), specifier.replace(/\.js$/, '.ts')))
      .split('\\')
      .join('/');
    if (existsSync(join(root, target))) found.push(target);
  }
  return found;
}

/** Every circle of the import graph, each once, as `a → b → … → a` starting at its smallest file. */
function circles(graph: Map<string, string[]>): string[] {
  // Tarjan's strongly connected components; a component of more than one file holds circles,
  // reported as one shortest circle through its smallest file so a message stays readable.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string): void => {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, indices.get(w) as number));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) connect(v);
  return components.map((component) => shortestCircle(graph, component[0] as string, new Set(component))).sort();
}

/** The shortest path from `start` back to itself inside one component, breadth first. */
function shortestCircle(graph: Map<string, string[]>, start: string, inside: Set<string>): string {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(previous.get(path[0] as string) as string);
        return [...path, start].join(' → ');
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return start;
}

describe('imports under src/', () => {
  it('make no circle (static imports, type-only included)', () => {
    const graph = new Map(sourceFiles().map((file) => [file, importsOf(file)]));
    const found = circles(graph);
    expect(found, 'break these circles: move what both sides need to a module below them').toEqual([]);
  });
});
