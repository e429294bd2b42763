/** A loopback server whose answers a test scripts: for body shapes the sandbox never sends. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import { type RunOptions, type RunResult, runOpcli } from '../helpers.js';

export interface Seen {
  method: string;
  url: string;
  body: string;
}

export type Answer = { status: number; body: unknown; headers?: Record<string, string> };

/** Starts a server answering each request with the next of `answers` (500 when they run out). */
export async function scriptedServer(answers: (Answer | ((seen: Seen) => Answer))[]): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer(async (req, res) => {
    const s = { method: req.method ?? '', url: req.url ?? '', body: await text(req) };
    seen.push(s);
    const next = answers[seen.length - 1];
    const a = typeof next === 'function' ? next(s) : (next ?? { status: 500, body: { message: 'no more scripted answers' } });
    res.writeHead(a.status, { 'content-type': typeof a.body === 'string' ? 'text/plain' : 'application/json', ...a.headers });
    res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A page of orders in the spec's shape. */
export function page(nodes: unknown[], options: { next?: string; total?: number } = {}) {
  return {
    pageInfo: { startCursor: null, endCursor: options.next ?? null, hasNextPage: !!options.next, hasPreviousPage: false },
    pageCursors: { around: [] },
    totalCount: options.total ?? nodes.length,
    edges: nodes.map((node) => ({ node })),
  };
}

/**
 * Runs opcli against a scripted server answering `answers` in order (with a service token, so no
 * profile is needed); returns what it printed and the requests the server saw.
 */
export async function runAgainst(
  answers: Parameters<typeof scriptedServer>[0],
  argv: string[],
  options: RunOptions = {},
): Promise<RunResult & { seen: Seen[] }> {
  const server = await scriptedServer(answers);
  try {
    const r = await runOpcli(argv, { ...options, env: { ...options.env, OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_scripted' } });
    return { ...r, seen: server.seen };
  } finally {
    await server.close();
  }
}
