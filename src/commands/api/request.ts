import type { Command } from 'commander';
import type { Deps } from '../../core/deps.js';
import * as api from './raw-request.js';
import type { ApiRequestInit } from './raw-request.js';
import { ApiError, RedirectError, UsageError } from '../../core/errors.js';
import { printBody, printHead } from './answer.js';
import { collectHeader, collectQuery, headerRecord, METHODS, parseMethod, parsePath, refuseLeavingBase, SECRET_HEADER } from './args.js';
import { orderPages } from '../../api/paginate.js';
import { readDataText } from '../../input/data.js';
import { createPageLimiter } from '../../orders/rate.js';
import { count, createProgress } from '../../text/progress.js';

/** The request, and how to read its body and show its answer. */
export interface ApiOptions extends ApiRequestInit {
  /** Inline JSON, @file, or - for standard input. */
  data?: string;
  jsonl: boolean;
  include: boolean;
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
    .option('-H, --header <header>', 'add a request header, "Name: value" (repeatable); not Authorization or Host', collectHeader)
    .option('--paginate', 'GET /v1/orders: follow endCursor to the last page and merge the edges')
    .option('--jsonl', 'with --paginate: print one order node per line as pages arrive')
    .option('--no-auth', 'send no Authorization header')
    .option('-i, --include', 'print the status line and response headers on stderr')
    .addHelpText(
      'after',
      `
The bearer token of the active profile is attached, except for the token, revoke and session
verify endpoints, which the spec says take none, however the path is written (dot segments,
%2e, doubled slashes, case); a path with a #fragment is refused. A redirect is never followed.
GET, PUT and DELETE are retried on 429/5xx and lost connections; a POST whose answer was lost
is not resent. A non-2xx answer prints its body on
stdout and exits with the code of the error (1, 2 for a refused body, 4 for 401/403).
A PUT of /v1/orders/{id} REPLACES the whole order: every field its body leaves out is erased. To
change some fields of an order, use \`opcli orders update\`, which keeps the others.

Examples:
  $ opcli api GET /v1/orders --query size=5
  $ opcli api GET /v1/orders --paginate --query size=250 --jsonl > orders.jsonl
  $ opcli api PUT /v1/orders/ord_000001 --data @order.json   # order.json: the complete order
  $ opcli api GET /v1/orders -H 'X-Request-Id: 42' --verbose
  $ echo '{"session_token":"…"}' | opcli api POST /v1/oauth/session/verify --data -`,
    )
    .action(
      async (
        method: string,
        path: string,
        flags: {
          data?: string;
          query?: [string, string][];
          header?: [string, string][];
          paginate?: boolean;
          jsonl?: boolean;
          auth?: boolean;
          include?: boolean;
        },
      ) => {
        const checked = { method: parseMethod(method), path: parsePath(path) };
        if (flags.jsonl && !flags.paginate) throw new UsageError('--jsonl streams the pages of --paginate; add --paginate.');
        await run(
          {
            ...checked,
            data: flags.data,
            query: flags.query ?? [],
            headers: headerRecord(flags.header ?? []),
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
  // A header that carries a credential is masked wherever opcli prints it (--verbose, errors).
  for (const [name, value] of Object.entries(opts.headers ?? {})) if (SECRET_HEADER.test(name)) deps.redactor.add(value);
  let json: unknown;
  if (opts.data !== undefined) {
    const { text, source } = await readDataText(deps, opts.data, { inline: true });
    json = api.parseJsonBody(text, source);
  }
  const http = await deps.http();
  refuseLeavingBase(http, opts.path);
  const req = api.apiRequest(opts, json);
  const show = (answer: { status: number; headers: Record<string, string>; body?: unknown }) => {
    if (opts.include) printHead(deps, answer.status, answer.headers);
    printBody(deps, answer.body);
  };

  if (opts.paginate) {
    // The pages share `orders list --all`'s limiter: paced at the rate the server allows, as learnt.
    const limiter = createPageLimiter(deps, { onNotice: (text) => deps.err(text) });
    const progress = createProgress(deps);
    const started = deps.now();
    const edges: unknown[] = [];
    let last: unknown;
    let nodes = 0;
    let pages = 0;
    try {
      for await (const { status, headers, page } of orderPages(http, req, deps.signal, limiter)) {
        // Output to a terminal shares the screen with the progress line: the line is taken off first.
        if (deps.io.stdoutIsTTY) progress.clear();
        if (opts.include) printHead(deps, status, headers);
        if (opts.jsonl) deps.out((page.edges ?? []).map((e) => `${JSON.stringify(e.node)}\n`).join(''));
        else edges.push(...(page.edges ?? []));
        last = page;
        nodes += (page.edges ?? []).length;
        pages++;
        progress.update(() => {
          const seconds = (deps.now() - started) / 1000;
          return `${count(nodes)} orders · ${count(pages)} page${pages === 1 ? '' : 's'}${seconds > 0 ? ` · ${count(Math.round(nodes / seconds))} orders/s` : ''}`;
        });
      }
    } finally {
      progress.done();
    }
    if (!opts.jsonl) deps.out(`${JSON.stringify({ ...(last as object), edges }, null, 2)}\n`);
    return;
  }
  try {
    show(await api.sendRequest(http, req, deps.signal));
  } catch (error) {
    // The answer's head (--include) and an error's body are shown as they came, then the error.
    // A redirect's body is not the answer: only its head is shown (--include).
    if (error instanceof ApiError) show(error instanceof RedirectError ? { status: error.status, headers: error.headers } : error);
    throw error;
  }
}
