/**
 * Who may talk to the sandbox: its own user, from this machine (docs/guides/sandbox.md#who-may-use-it).
 * A loopback Host (a DNS-rebinding page names its own: 421), no `Origin` but its own (403); the admin
 * API also needs the run's secret (401) and JSON bodies (415), which no web page can send cross-origin
 * without asking first.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Ctx, Reply } from './http.js';
import { isJsonContentType, json } from './http.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export function newAdminSecret(): string {
  return `sbx_admin_${randomBytes(24).toString('base64url')}`;
}

/** A loopback name with any port: a local gateway (nginx with TLS) keeps its own port in Host. */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  const match = /^(localhost|127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?$/i.exec(host ?? '');
  return match !== null && (match[2] === undefined || Number(match[2]) <= 65535);
}

/** The origins of the consent page, one per loopback name. */
export function ownOrigins(port: number): Set<string> {
  return new Set(LOOPBACK_NAMES.map((name) => `http://${name}:${port}`));
}

/** Equal in time that does not depend on where they differ. */
function sameSecret(given: string, secret: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/** The refusal of a stranger's request, or undefined to serve it. */
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
