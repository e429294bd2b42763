/**
 * Who may talk to the sandbox: its own user, from this machine (issue 38 row 11). Every request
 * must name a loopback host (a DNS-rebinding page names its own: 421) and may carry no `Origin` but
 * the sandbox's own (a web page's request: 403). The admin API under /__admin also needs the
 * per-run secret as a bearer token (401), and takes JSON bodies only (415), which no web page can
 * send to another origin without asking first. The secret is printed by `opcli sandbox` and written
 * to the profile by `--write-profile` (docs/guides/sandbox.md#who-may-use-it).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Ctx, Reply } from './http.js';
import { isJsonContentType, json } from './http.js';

/** The host names of this machine a sandbox answers to. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** A new admin secret for one run of a sandbox. */
export function newAdminSecret(): string {
  return `sbx_admin_${randomBytes(24).toString('base64url')}`;
}

/**
 * Whether a Host header names this machine: a loopback name, with or without a port. Any port: a
 * local gateway in front of the sandbox (nginx with TLS) keeps its own port in Host, and a page of
 * another site cannot name a loopback host, which is what DNS rebinding needs.
 */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  const match = /^(localhost|127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?$/i.exec(host ?? '');
  return match !== null && (match[2] === undefined || Number(match[2]) <= 65535);
}

/** The origins of the sandbox's own pages (the consent page), one per loopback name. */
export function ownOrigins(port: number): Set<string> {
  return new Set(LOOPBACK_NAMES.map((name) => `http://${name}:${port}`));
}

/** Whether two secrets are equal, in time that does not depend on where they differ. */
function sameSecret(given: string, secret: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/** The refusal of a request that did not come from the sandbox's own user, or undefined to serve it. */
export function refuseStranger(ctx: Ctx, guard: { origins: Set<string>; adminSecret: string }): Reply | undefined {
  if (!isLoopbackHostHeader(ctx.headers.host)) {
    return json(421, {
      error: 'misdirected_request',
      message: `the sandbox answers only to ${LOOPBACK_NAMES.join(', ')} in the Host header`,
    });
  }
  const origin = ctx.headers.origin;
  if (origin !== undefined && !guard.origins.has(origin.toLowerCase())) {
    return json(403, { error: 'forbidden_origin', message: 'the sandbox answers no request from another origin (a web page)' });
  }
  if (!(ctx.path === '/__admin' || ctx.path.startsWith('/__admin/'))) return undefined;
  const given = /^Bearer\s+(\S+)$/i.exec(ctx.headers.authorization ?? '')?.[1];
  if (given === undefined || !sameSecret(given, guard.adminSecret)) {
    return json(
      401,
      { error: 'unauthorized', message: 'the admin API needs the admin secret that `opcli sandbox` printed, as Authorization: Bearer <secret>' },
      { 'www-authenticate': 'Bearer realm="opcli sandbox admin"' },
    );
  }
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !isJsonContentType(ctx.headers)) {
    return json(415, {
      error: 'unsupported_media_type',
      message: `the admin API takes JSON only: send content-type application/json, got ${ctx.headers['content-type'] ?? 'none'}`,
    });
  }
  return undefined;
}
