/** Request context, reply values and the small HTTP helpers every sandbox handler shares. */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { fieldIssues } from '../schemas.js';
import type { ReceivedRequest } from './types.js';

/** What a handler sees: what the recorder keeps, the route's path parameters and the client's address. */
export type Ctx = Pick<ReceivedRequest, 'method' | 'path' | 'query' | 'headers' | 'body'> & { params: string[]; ip: string };

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** A string is sent as is (with its own content-type); anything else as JSON. */
  body?: unknown;
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, body, headers };
}

/** A 400 `invalid_request` answer in the ApiErrorBody shape. */
export function invalidRequest(message: string, errors?: { path: string; message: string }[]): Reply {
  return json(400, errors ? { error: 'invalid_request', message, errors } : { error: 'invalid_request', message });
}

/** The data, or a 400 naming each field that failed. */
export function validate<T extends z.ZodType>(schema: T, value: unknown, what: string): { ok: true; data: z.output<T> } | { ok: false; reply: Reply } {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, data: result.data };
  const errors = fieldIssues(result.error);
  const first = errors[0];
  const summary = first ? `${first.path || what}: ${first.message}` : 'invalid';
  return { ok: false, reply: invalidRequest(`invalid ${what}: ${summary}`, errors) };
}

/** Parameters such as charset allowed. */
export function isJsonContentType(headers: Record<string, string>): boolean {
  const type = headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json';
}

/** Or a 400 for a missing content-type, an empty body or bad JSON. */
export function readJson(ctx: Ctx): { ok: true; value: unknown } | { ok: false; reply: Reply } {
  if (!isJsonContentType(ctx.headers)) {
    const got = ctx.headers['content-type'] ?? 'none';
    return { ok: false, reply: invalidRequest(`expected content-type application/json, got ${got}`) };
  }
  if (ctx.body.trim() === '') return { ok: false, reply: invalidRequest('the request body is empty; expected a JSON object') };
  try {
    return { ok: true, value: JSON.parse(ctx.body) };
  } catch (error) {
    return { ok: false, reply: invalidRequest(`the request body is not valid JSON: ${(error as Error).message}`) };
  }
}

export function readBody<T extends z.ZodType>(ctx: Ctx, schema: T, what: string): { ok: true; data: z.output<T> } | { ok: false; reply: Reply } {
  const parsed = readJson(ctx);
  if (!parsed.ok) return parsed;
  return validate(schema, parsed.value, what);
}

/** A repeated header joined with ", " as http/client.ts's joinHeaders does; not imported from there: the sandbox loads no undici. */
export function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
