/**
 * Building a request as it goes on the wire, and the --verbose trace of it and of its answer:
 * headers (lower-cased, the bearer token, JSON's content type) and what a trace may show.
 */
import { redactJson } from '../core/redact.js';
import { safeText } from '../text/safe.js';

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|localhost|\[::1\])$/i;

/** Whether a URL may carry credentials: https anywhere, http only to loopback. */
export function isSafeForCredentials(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.test(url.hostname));
}

/** What a request carries: its caller's headers, a token or none, a JSON body or none. */
export interface Outgoing {
  userAgent: string;
  headers?: Record<string, string>;
  token?: string;
  json?: unknown;
}

/** The headers (lower-cased) and body of a request: the bearer token when there is one, never the caller's own Authorization otherwise. */
export function buildRequest(out: Outgoing): { headers: Record<string, string>; body?: string } {
  // No prototype: a caller's header named `__proto__` is a header, not the object's prototype.
  const headers: Record<string, string> = Object.assign(Object.create(null), { 'user-agent': out.userAgent, accept: 'application/json' });
  for (const [k, v] of Object.entries(out.headers ?? {})) headers[k.toLowerCase()] = v;
  if (out.token) headers.authorization = `Bearer ${out.token}`;
  else delete headers.authorization;
  if (out.json === undefined) return { headers };
  headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(out.json) };
}

/** A header's value as a trace shows it: credentials masked. */
function redactHeader(name: string, value: string): string {
  if (name === 'authorization') return value.replace(/^(\w+)\s+.*$/, '$1 ***');
  if (/token|secret|cookie|api-key/i.test(name)) return '***';
  return value;
}

/** The --verbose lines of requests and answers, already redacted; server text made safe for a terminal (JSON.stringify leaves DEL and C1 raw). */
export class Tracer {
  private readonly sink: (line: string) => void;

  constructor(sink: (line: string) => void) {
    this.sink = (line) => sink(safeText(line));
  }

  /** The request: how it goes out (`route`), its URL without secrets in the query, headers, JSON body. */
  request(route: string, method: string, url: URL, headers: Record<string, string>, json: unknown): void {
    this.sink(`* ${url.origin}: ${route}`);
    const shown = new URL(url);
    for (const key of [...shown.searchParams.keys()]) {
      if (/token|secret|code|verifier/i.test(key)) shown.searchParams.set(key, '***');
    }
    this.sink(`> ${method} ${shown}`);
    for (const [k, v] of Object.entries(headers)) this.sink(`> ${k}: ${redactHeader(k, v)}`);
    if (json !== undefined) this.sink(`> ${JSON.stringify(redactJson(json))}`);
  }

  /** The answer: status and time, headers, body (text cut at 4,000 characters). */
  response(status: number, headers: Record<string, string>, body: unknown, ms: number): void {
    this.sink(`< ${status} (${ms} ms)`);
    for (const [k, v] of Object.entries(headers)) this.sink(`< ${k}: ${redactHeader(k, v)}`);
    if (body !== '' && body !== undefined) this.sink(`< ${typeof body === 'string' ? body.slice(0, 4000) : JSON.stringify(redactJson(body))}`);
  }
}
