/**
 * Secrets typed into `opcli api`'s arguments: a header whose name says credential (`X-Api-Key`,
 * `X-Auth-Token`, `Cookie` …), a `--query` parameter or an inline `--data` key named as one
 * (`access_token`, `client_secret`, `password` …). They are sent as given and masked wherever opcli
 * prints, and each earns the warning every secret given as an argument gets: other users see
 * arguments in `ps` and the shell keeps them in its history (docs/http.md#secrets-in-arguments).
 */
import type { Deps } from '../../cli/deps.js';
import { SECRET_KEYS } from '../../core/redact.js';
import { warnSecretArgument } from '../secret-input.js';
import { SECRET_HEADER } from './args.js';

/** What `opcli api` was given on its command line. */
export interface TypedArguments {
  /** `-H` headers typed as arguments (not read from a file), by lower-case name. */
  headers: [string, string][];
  query: [string, string][];
  /** The parsed --data body, when it was typed inline. */
  inlineData?: unknown;
}

/** The keys of a parsed body, at any depth, whose names say secret (with their values). */
function secretKeys(body: unknown): [string, string][] {
  const found: [string, string][] = [];
  // The body was checked for depth when it was parsed (src/input/data.ts): a bounded walk.
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (SECRET_KEYS.has(k.toLowerCase()) && typeof v === 'string' && v !== '') found.push([k, v]);
        else visit(v);
      }
    }
  };
  visit(body);
  return found;
}

/** Masks every secret typed as an argument in what opcli prints, and warns once for each on stderr (the value never shown). */
export function warnTypedSecrets(deps: Pick<Deps, 'err' | 'redactor'>, typed: TypedArguments): void {
  for (const [name, value] of typed.headers) {
    if (!SECRET_HEADER.test(name)) continue;
    deps.redactor.add(value);
    warnSecretArgument(deps, `the ${name} header`, '`-H @FILE` (one `Name: value` a line, as curl reads it)');
  }
  for (const [key, value] of typed.query) {
    if (!SECRET_KEYS.has(key.toLowerCase()) || value === '') continue;
    deps.redactor.add(value);
    warnSecretArgument(
      deps,
      `the ${key} query parameter`,
      'a header from a file (`-H @FILE`) where the server takes one; a query string also reaches server logs',
    );
  }
  for (const [key, value] of secretKeys(typed.inlineData)) {
    deps.redactor.add(value);
    warnSecretArgument(deps, `"${key}" in --data`, '`--data @FILE` or `--data -` (standard input)');
  }
}
