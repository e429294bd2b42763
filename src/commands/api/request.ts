import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { ApiError, UsageError } from '../../errors.js';
import type { Method } from '../../http/retry.js';
import { printBody, printHead, refuseRedirect } from './answer.js';
import { checkPath, refuseLeavingBase } from './path.js';

export interface ApiOptions {
  method: Method;
  path: string;
  /** Inline JSON, @file, or - for standard input. */
  data?: string;
  query: [string, string][];
  paginate: boolean;
  jsonl: boolean;
  /** False with --no-auth; paths of endpoints 1-3 never carry a token. */
  auth: boolean;
  include: boolean;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

/** Endpoints whose requests carry no Authorization header (spec, Authentication rule 6). */
const UNAUTHENTICATED = ['/v1/oauth/token', '/v1/oauth/revoke', '/v1/oauth/session/verify'];

function collectQuery(value: string, prev: [string, string][] = []): [string, string][] {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`--query expects key=value, got "${value}".`, 'For example: --query size=50 --query cursor=b2E6NTA');
  return [...prev, [value.slice(0, eq), value.slice(eq + 1)]];
}

/** Registers `opcli api <METHOD> <path>`. */
export function register(program: Command, deps: Deps): void {
  program
    .command('api')
    .description('Make an authenticated request to any endpoint and print the JSON answer')
    .argument('<method>', `HTTP method: ${METHODS.join(', ')}`)
    .argument('<path>', 'path below the base URL, e.g. /v1/orders (a query string may be included)')
    .option('-d, --data <json>', 'request body: inline JSON, @file.json, or - for standard input')
    .option('-q, --query <key=value>', 'add a query parameter (repeatable)', collectQuery)
    .option('--paginate', 'GET /v1/orders: follow endCursor to the last page and merge the edges')
    .option('--jsonl', 'with --paginate: print one order node per line as pages arrive')
    .option('--no-auth', 'send no Authorization header')
    .option('-i, --include', 'print the status line and response headers on stderr')
    .addHelpText(
      'after',
      `
The bearer token of the active profile is attached, except for the token, revoke and session
verify endpoints, which the spec says take none. GET, PUT and DELETE are retried on 429/5xx and
lost connections; a POST whose answer was lost is not resent. A non-2xx answer prints its body on
stdout and exits with the code of the error (1, 2 for a refused body, 4 for 401/403).

Examples:
  $ opcli api GET /v1/orders --query size=5
  $ opcli api GET /v1/orders --paginate --query size=250 --jsonl > orders.jsonl
  $ opcli api PUT /v1/orders/ord_000001 --data @order.json
  $ echo '{"session_token":"…"}' | opcli api POST /v1/oauth/session/verify --data -`,
    )
    .action(
      async (
        method: string,
        path: string,
        flags: { data?: string; query?: [string, string][]; paginate?: boolean; jsonl?: boolean; auth?: boolean; include?: boolean },
      ) => {
        const upper = method.toUpperCase();
        if (!(METHODS as readonly string[]).includes(upper)) throw new UsageError(`Unknown method "${method}".`, `Use one of ${METHODS.join(', ')}.`);
        checkPath(path);
        if (flags.jsonl && !flags.paginate) throw new UsageError('--jsonl streams the pages of --paginate; add --paginate.');
        await run(
          {
            method: upper as Method,
            path: path.startsWith('/') ? path : `/${path}`,
            data: flags.data,
            query: flags.query ?? [],
            paginate: !!flags.paginate,
            jsonl: !!flags.jsonl,
            auth: flags.auth !== false,
            include: !!flags.include,
          },
          deps,
        );
      },
    );
}

/** Sends the request (or walks the pages) and prints the JSON answer. */
export async function run(opts: ApiOptions, deps: Deps): Promise<void> {
  let json: unknown;
  if (opts.data !== undefined) {
    const { readDataText } = await import('../../input/data.js');
    const { text, source } = await readDataText(deps, opts.data, { inline: true });
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`, 'Pass JSON inline, as @file.json, or - for standard input.');
    }
  }
  const pathOnly = opts.path.split('?')[0] ?? opts.path;
  const auth = opts.auth && !UNAUTHENTICATED.includes(pathOnly.replace(/\/+$/, ''));
  const query = Object.fromEntries(opts.query);
  const http = await deps.http();
  refuseLeavingBase(http, opts.path);

  if (opts.paginate) {
    if (opts.method !== 'GET' || pathOnly.replace(/\/+$/, '') !== '/v1/orders') {
      throw new UsageError('--paginate follows the cursors of GET /v1/orders only.');
    }
    const { orderPages } = await import('../../api/paginate.js');
    const edges: unknown[] = [];
    let last: unknown;
    for await (const { status, headers, page } of orderPages(http, { path: opts.path, pathOnly, query, auth, signal: deps.signal }, (res) =>
      refuseRedirect('GET', pathOnly, res),
    )) {
      if (opts.include) printHead(deps, status, headers);
      if (opts.jsonl) {
        let chunk = '';
        for (const e of page.edges ?? []) chunk += `${JSON.stringify(e.node)}\n`;
        deps.out(chunk);
      } else edges.push(...(page.edges ?? []));
      last = page;
    }
    if (!opts.jsonl) deps.out(`${JSON.stringify({ ...(last as object), edges }, null, 2)}\n`);
    return;
  }

  try {
    const res = await http.request({ method: opts.method, url: opts.path, query, json, auth, signal: deps.signal });
    if (opts.include) printHead(deps, res.status, res.headers);
    refuseRedirect(opts.method, pathOnly, res);
    printBody(deps, res.body);
  } catch (error) {
    if (error instanceof ApiError) {
      if (opts.include) printHead(deps, error.status, error.headers);
      printBody(deps, error.body);
    }
    throw error;
  }
}
