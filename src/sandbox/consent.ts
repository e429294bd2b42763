/** The consent page: GET /v1/oauth/authorize shows Approve / Deny, the decision redirects with a code. */
import { randomBytes } from 'node:crypto';
import type { Ctx, Reply } from './http.js';
import { escapeHtml } from '../text/safe.js';
import { ungrantedScopes } from './oauth.js';
import { APP_NAME, STORE_NAME } from './seed.js';
import type { PendingAuthorization, SandboxState } from './state.js';

const CODE_TTL_MS = 60_000;
const PENDING_TTL_MS = 10 * 60_000;
const CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

function page(status: number, title: string, inner: string): Reply {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem}.error{color:#a00}</style></head>
<body>${inner}</body></html>`;
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
      'cache-control': 'no-store',
    },
    body: html,
  };
}

function errorPage(message: string): Reply {
  return page(400, 'Authorization error', `<h1>Authorization error</h1><p class="error">${escapeHtml(message)}</p>`);
}

function redirect(to: string, params: Record<string, string | null>): Reply {
  const url = new URL(to);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return { status: 302, headers: { location: url.toString(), 'cache-control': 'no-store' }, body: '' };
}

/** Whether a redirect URI matches the registered one, the port aside (RFC 8252 section 7.3). */
export function redirectUriMatches(registered: string, given: string): boolean {
  let a: URL;
  let b: URL;
  try {
    a = new URL(registered);
    b = new URL(given);
  } catch {
    return false;
  }
  return (
    a.protocol === b.protocol &&
    a.hostname === b.hostname &&
    a.pathname === b.pathname &&
    a.search === b.search &&
    b.hash === '' &&
    b.username === '' &&
    b.password === ''
  );
}

function issueCode(state: SandboxState, pending: PendingAuthorization): Reply {
  const code = randomBytes(24).toString('base64url');
  state.codes.set(code, {
    clientId: pending.clientId,
    redirectUri: pending.redirectUri,
    scopes: pending.scopes,
    challenge: pending.challenge,
    expiresAt: state.now() + CODE_TTL_MS,
    used: false,
    familyId: null,
  });
  return redirect(pending.redirectUri, { code, state: pending.state });
}

/** GET /v1/oauth/authorize. */
export function authorizePage(state: SandboxState, ctx: Ctx): Reply {
  const q = ctx.query;
  if (q.client_id !== state.client.clientId) return errorPage(`Unknown client: ${q.client_id ?? '(no client_id)'}`);
  const redirectUri = q.redirect_uri ?? '';
  if (!redirectUriMatches(state.client.redirectUri, redirectUri)) {
    return errorPage(`The redirect_uri ${redirectUri || '(none)'} is not registered for this app (registered: ${state.client.redirectUri}, any port).`);
  }
  // From here on the redirect URI is trusted, so errors go back to the app (RFC 6749 4.1.2.1).
  const appState = q.state ?? null;
  const fail = (error: string, description: string) => redirect(redirectUri, { error, error_description: description, state: appState });
  if (q.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  const scopes = q.scope ? [...new Set(q.scope.split(' ').filter(Boolean))] : [...state.store.scopes];
  const unknown = ungrantedScopes(state, scopes);
  if (unknown.length > 0) return fail('invalid_scope', `unknown or ungranted scope: ${unknown.join(' ')}`);
  const challenge = q.code_challenge ?? null;
  const method = q.code_challenge_method;
  if (challenge !== null) {
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is refused)');
    if (!CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge is not a valid S256 challenge');
  } else if (method !== undefined) {
    return fail('invalid_request', 'code_challenge_method given without code_challenge');
  }
  const pending: PendingAuthorization = {
    clientId: state.client.clientId,
    redirectUri,
    scopes,
    state: appState,
    challenge,
    expiresAt: state.now() + PENDING_TTL_MS,
  };
  if (state.settings.autoApprove) return issueCode(state, pending);
  const id = randomBytes(18).toString('base64url');
  state.pending.set(id, pending);
  const scopeItems = scopes.map((s) => `<li><code>${escapeHtml(s)}</code></li>`).join('');
  return page(
    200,
    `Authorize ${APP_NAME}`,
    `<h1>Authorize ${escapeHtml(APP_NAME)}</h1>
<p><strong>${escapeHtml(APP_NAME)}</strong> (client <code>${escapeHtml(state.client.clientId)}</code>) asks for access to
<strong>${escapeHtml(STORE_NAME)}</strong> (<code>${escapeHtml(state.store.storeId)}</code>, ${escapeHtml(state.store.shopUrl)}).</p>
<p>Requested scopes:</p><ul id="scopes">${scopeItems}</ul>
<form method="post" action="/v1/oauth/authorize/decision">
<input type="hidden" name="request_id" value="${escapeHtml(id)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** POST /v1/oauth/authorize/decision (the consent form). */
export function authorizeDecision(state: SandboxState, ctx: Ctx): Reply {
  const form = new URLSearchParams(ctx.body);
  const id = form.get('request_id') ?? '';
  const pending = state.pending.get(id);
  state.pending.delete(id);
  if (!pending || pending.expiresAt <= state.now()) {
    return errorPage('This authorization request is unknown, expired or already answered. Start again from the app.');
  }
  const decision = form.get('decision');
  if (decision === 'approve') return issueCode(state, pending);
  if (decision === 'deny') {
    return redirect(pending.redirectUri, {
      error: 'access_denied',
      error_description: 'the merchant denied the authorization request',
      state: pending.state,
    });
  }
  return errorPage('The decision must be approve or deny.');
}
