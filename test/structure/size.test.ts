import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, sourceFiles } from './source.js';

const MAX_FUNCTION_LINES = 80;

/** A readable name for a function node: its own, its variable's, its property's, or "(anonymous)". */
function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name) || ts.isPrivateIdentifier(named.name))) return named.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

/** Every function of a file (declarations, methods, arrows, expressions) longer than the limit. */
function longFunctions(file: string): string[] {
  const source = parse(file);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) found.push(`${file}:${start + 1} ${nameOf(node)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Functions stay short; a file holds one idea whatever its length (issue 41: a file cap split one
 * idea across files only because it passed a number of lines).
 */
describe('size of the code under src/', () => {
  const files = sourceFiles();

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.flatMap(longFunctions);
    expect(long, 'split these functions into named parts').toEqual([]);
  });
});
