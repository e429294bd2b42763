import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, root, sourceFiles } from './source.js';

/**
 * Where the whole `Deps` may be taken, and so where printing and prompting live: the verbs, the
 * entry, the run's dependencies themselves, and the modules that render or ask. Everything else
 * (the services) takes ports naming the few things it uses (issue 31).
 */
const MAY_TAKE_DEPS = [
  'src/commands/',
  'src/cli/program.ts',
  'src/cli/main.ts',
  'src/cli/deps.ts',
  'src/cli/report-error.ts',
  'src/core/output.ts',
  'src/core/prompter.ts',
  'src/text/',
];

/** Services not yet moved to ports; each entry is a debt to pay, never a place to add one. */
const NOT_YET: string[] = [];

/** The methods of `Deps` that print or ask. */
const TERMINAL_METHODS = new Set(['out', 'err', 'prompter']);

/** Whether a module specifier, seen from `file`, names src/cli/deps.ts. */
function isDeps(file: string, specifier: string): boolean {
  if (!specifier.startsWith('.')) return false;
  const target = relative(root, join(root, dirname(file), specifier))
    .split('\\')
    .join('/');
  return target === 'src/cli/deps.js' || target === 'src/cli/deps.ts' || target === 'src/cli/deps';
}

/** Where a file takes the `Deps` type or calls a printing or prompting method, as `file:line what`. */
function terminalReach(file: string): string[] {
  const source = parse(file);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${what}`);
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (isDeps(file, node.moduleSpecifier.text)) {
        const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
        const names =
          bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))
            ? bindings.elements.map((e) => (e.propertyName ?? e.name).text)
            : bindings
              ? ['* (the whole module, Deps with it)']
              : [];
        for (const name of names) if (name === 'Deps' || name.startsWith('*')) at(node, `imports ${name} from src/cli/deps.ts`);
      }
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      if (isDeps(file, node.argument.literal.text) && node.qualifier && ts.isIdentifier(node.qualifier) && node.qualifier.text === 'Deps')
        at(node, `takes import('…/deps.js').Deps`);
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && TERMINAL_METHODS.has(node.expression.name.text))
      at(node, `calls .${node.expression.name.text}(`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The source files that must not reach the terminal. */
function services(): string[] {
  return sourceFiles().filter((file) => !MAY_TAKE_DEPS.some((allowed) => (allowed.endsWith('/') ? file.startsWith(allowed) : file === allowed)));
}

describe('services below src/commands/', () => {
  it('take ports, not Deps, and never print or prompt', () => {
    const found = services()
      .filter((file) => !NOT_YET.includes(file))
      .flatMap(terminalReach);
    expect(
      found,
      'a service names what it uses (http, clock, signal, record, an `ask` or notice callback) instead of taking Deps; printing and prompting belong in src/commands/',
    ).toEqual([]);
  });

  it('finds what it forbids (a file that takes Deps and prints is reported)', () => {
    // The check itself, on the verbs that may do both: it must see them, or it sees nothing anywhere.
    expect(terminalReach('src/commands/body-verb.ts').join('\n')).toMatch(/imports Deps from src\/cli\/deps\.ts[\s\S]*calls \.(out|err)\(/);
  });

  it('keeps no stale entry in the list of services not yet moved', () => {
    expect(NOT_YET.filter((file) => !services().includes(file) || terminalReach(file).length === 0)).toEqual([]);
  });
});
