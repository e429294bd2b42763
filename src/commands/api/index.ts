import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { resolve } from 'node:path';
import { ApiError, RedirectError, UsageError } from '../../core/errors.js';
import {
  type ApiRequestInit,
  apiRequest,
  collectHeader,
  collectQuery,
  type HeaderPair,
  headerRecord,
  METHODS,
  methodAndPath,
  parsePath,
  refuseLeavingBase,
  SECRET_HEADER,
  warnTypedSecrets,
} from './args.js';
import { readSecretFile } from '../secret-input.js';
import { createPageLimiter, orderPages, progressLine } from '../../orders/pages.js';
import { parseJsonText, readDataText } from '../../input/data.js';
import { createProgress } from '../../text/progress.js';
import { safeLine, safeText } from '../../text/safe.js';

/** The request, and how to read its body and show its answer. */
export interface ApiOptions extends ApiRequestInit {
  /** Inline JSON, @file, or - for standard input. */
  data?: string;
  /** The `-H` headers typed as arguments (not read from `-H @FILE`): a secret among them is warned about. */
  typedHeaders?: [string, string][];
  jsonl: boolean;
  include: boolean;
}

/** What `opcli api --help` says after the flags: the rules a user meets, and examples. */
const HELP = `
As with \`gh api\`, the method may be left out: GET, or POST when --data gives a body; name
another before the path (\`opcli api PUT /v1/orders/…\`) or with -X.
The bearer token of the active profile is attached, except for the token, revoke and session
verify endpoints, which the spec says take none, however the path is written (dot segments,
%2e, doubled slashes, case); a path with a #fragment is refused. A redirect is never followed.
GET, PUT and DELETE are retried on 429/5xx and lost connections; a POST whose answer was lost
is not resent. A non-2xx answer prints its body on
stdout and exits with the code of the error (1, 2 for a refused body, 4 for 401/403).
A secret typed as an argument (a header such as X-Api-Key, a query or inline --data key such as
access_token or password) is sent, masked in every trace, and warned about: \`ps\` shows it to
other users. -H @FILE and --data @FILE keep it off the command line.
A PUT of /v1/orders/{id} REPLACES the whole order: every field its body leaves out is erased. To
change some fields of an order, use \`opcli orders update\`, which keeps the others.

Examples:
  $ opcli api /v1/orders --query size=5
  $ opcli api /v1/orders --paginate --query size=250 --jsonl > orders.jsonl
  $ opcli api PUT /v1/orders/ord_000001 --data @order.json   # order.json: the complete order
  $ opcli api /v1/orders -H 'X-Request-Id: 42' --verbose
  $ echo '{"session_token":"…"}' | opcli api /v1/oauth/session/verify --data -   # POST`;

/** `opcli api [METHOD] <path>`: an authenticated raw request, like `gh api`. */
export function register(program: Command, deps: Deps): void {
  program
    .command('api')
    .description('Make an authenticated request to any endpoint and print the JSON answer')
    .usage('[options] [method] <path>')
    .argument('[method]', `HTTP method: ${METHODS.join(', ')}; left out, GET, or POST with --data (as gh api)`)
    .argument('[path]', 'path below the base URL, e.g. /v1/orders (a query string may be included); alone, the only argument')
    .option('-X, --method <method>', `HTTP method: ${METHODS.join(', ')} (default GET, or POST with --data)`)
    .option('-d, --data <json>', 'request body: inline JSON, @file.json, or - for standard input')
    .option('-q, --query <key=value>', 'add a query parameter (repeatable)', collectQuery)
    .option(
      '-H, --header <header>',
      'add a request header, "Name: value", or @FILE for one a line (repeatable); not Authorization or Host',
      (value: string, prev?: HeaderPair[]) =>
        collectHeader(value, prev, (file) => readSecretFile(resolve(deps.cwd, file), '--header @FILE', (text) => deps.err(text))),
    )
    .option('--paginate', 'GET /v1/orders: follow endCursor to the last page and merge the edges')
    .option('--jsonl', 'with --paginate: print one order node per line as pages arrive')
    .option('--no-auth', 'send no Authorization header')
    .option('-i, --include', 'print the status line and response headers on stderr')
    .addHelpText('after', HELP)
    .action(
      async (
        first: string | undefined,
        second: string | undefined,
        flags: {
          method?: string;
          data?: string;
          query?: [string, string][];
          header?: HeaderPair[];
          paginate?: boolean;
          jsonl?: boolean;
          auth?: boolean;
          include?: boolean;
        },
      ) => {
        const given = methodAndPath(first, second, flags.method, flags.data !== undefined);
        const checked = { method: given.method, path: parsePath(given.path) };
        if (flags.jsonl && !flags.paginate) throw new UsageError('--jsonl streams the pages of --paginate; add --paginate.');
        await runRequest(
          {
            ...checked,
            data: flags.data,
            query: flags.query ?? [],
            headers: headerRecord(flags.header ?? []),
            typedHeaders: (flags.header ?? []).filter(([, , from]) => from !== 'file').map(([name, value]) => [name, value]),
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
async function runRequest(opts: ApiOptions, deps: Deps): Promise<void> {
  // A header that carries a credential is masked wherever opcli prints it (--verbose, errors).
  for (const [name, value] of Object.entries(opts.headers ?? {})) if (SECRET_HEADER.test(name)) deps.redactor.add(value);
  let json: unknown;
  if (opts.data !== undefined) {
    const { text, source } = await readDataText(deps, opts.data, { inline: true });
    json = parseJsonText(text, source, 'Pass JSON inline, as @file.json, or - for standard input.');
  }
  warnTypedSecrets(deps, {
    headers: opts.typedHeaders ?? [],
    query: opts.query,
    inlineData: opts.data === undefined || /^@|^-$/.test(opts.data) ? undefined : json,
  });
  const http = await deps.http();
  refuseLeavingBase(http, opts.path);
  const req = apiRequest(opts, json);
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
        progress.update(() => progressLine({ written: nodes, pages }, (deps.now() - started) / 1000));
      }
    } finally {
      progress.done();
    }
    if (!opts.jsonl) deps.out(`${JSON.stringify({ ...(last as object), edges }, null, 2)}\n`);
    return;
  }
  try {
    // A non-2xx answer throws ApiError (a 3xx its RedirectError), each with the answer's head.
    show(await http.request({ ...req, signal: deps.signal }));
  } catch (error) {
    // The answer's head (--include) and an error's body are shown as they came, then the error.
    // A redirect's body is not the answer: only its head is shown (--include).
    if (error instanceof ApiError) show(error instanceof RedirectError ? { status: error.status, headers: error.headers } : error);
    throw error;
  }
}

/** Prints the status line and headers (--include) on stderr, made safe. */
export function printHead(deps: Deps, status: number, headers: Record<string, string>): void {
  deps.err(
    `HTTP ${status}\n${Object.entries(headers)
      .map(([k, v]) => `${safeLine(k)}: ${safeLine(v)}`)
      .join('\n')}\n\n`,
  );
}

/** Prints the body on stdout: JSON pretty-printed, text as it came (made safe on a terminal). */
export function printBody(deps: Deps, body: unknown): void {
  if (body === undefined || body === '') return;
  // Text bodies reach a terminal made safe; a pipe gets them exactly.
  if (typeof body === 'string')
    deps.out(deps.io.stdoutIsTTY ? `${safeText(body.endsWith('\n') ? body : `${body}\n`)}` : body.endsWith('\n') ? body : `${body}\n`);
  else deps.out(`${JSON.stringify(body, null, 2)}\n`);
}
