/** The authorization server: endpoints 1 (token, three grants, rotation with reuse detection) and 2 (revoke); the consent page. */
import { createHash, randomBytes } from 'node:crypto';
import { escapeHtml } from '../text/safe.js';
import { RevokeRequest, TokenRequest } from '../schemas.js';
import type { Ctx, Reply } from './http.js';
import { isJsonContentType, json, readJson, validate } from './http.js';
import { APP_NAME, STORE_NAME } from './seed.js';
import type { PendingAuthorization, SandboxState } from './state.js';
import { issueTokens, newFamily, revokeFamily } from './tokens.js';

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const GRANT_TYPES = new Set(['authorization_code', 'client_credentials', 'refresh_token']);

/** An RFC 6749 error answer. */
function oauthError(status: number, error: string, description: string, extra?: Record<string, unknown>): Reply {
  return json(status, { error, error_description: description, ...extra }, NO_STORE);
}

/** A 400 of the shared validators as an OAuth error that keeps the field list. */
function asOAuth(reply: Reply): Reply {
  const body = reply.body as { message?: string; errors?: unknown };
  return oauthError(400, 'invalid_request', body.message ?? 'invalid request', {
    message: body.message,
    ...(body.errors ? { errors: body.errors } : {}),
  });
}

function clientError(state: SandboxState, clientId: string, clientSecret: string): Reply | null {
  if (clientId !== state.client.clientId || clientSecret !== state.client.clientSecret) {
    return oauthError(401, 'invalid_client', 'client authentication failed: unknown client_id or wrong client_secret');
  }
  return null;
}

/** The S256 code challenge of a PKCE verifier. */
function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** POST /v1/oauth/token. */
export function tokenEndpoint(state: SandboxState, ctx: Ctx): Reply {
  if (ctx.headers.authorization !== undefined) {
    return oauthError(400, 'invalid_request', 'the token endpoint takes client_id and client_secret in the JSON body; send no Authorization header');
  }
  if (!isJsonContentType(ctx.headers)) {
    return oauthError(
      400,
      'invalid_request',
      `the token endpoint accepts only application/json bodies, got ${ctx.headers['content-type'] ?? 'no content-type'}`,
    );
  }
  const parsed = readJson(ctx);
  if (!parsed.ok) return asOAuth(parsed.reply);
  const raw = parsed.value as { grant_type?: unknown } | null;
  if (raw && typeof raw === 'object' && typeof raw.grant_type === 'string' && !GRANT_TYPES.has(raw.grant_type)) {
    return oauthError(400, 'unsupported_grant_type', `grant_type ${raw.grant_type} is not supported`);
  }
  const checked = validate(TokenRequest, parsed.value, 'token request');
  if (!checked.ok) return asOAuth(checked.reply);
  const body = checked.data;
  const refused = clientError(state, body.client_id, body.client_secret);
  if (refused) return refused;

  switch (body.grant_type) {
    case 'authorization_code':
      return authorizationCodeGrant(state, body);
    case 'refresh_token':
      return refreshTokenGrant(state, body);
    case 'client_credentials':
      return clientCredentialsGrant(state, body);
  }
}

type Grant<T extends TokenRequest['grant_type']> = Extract<TokenRequest, { grant_type: T }>;

/** A code used once, by its client, with its redirect URI and PKCE verifier. */
function authorizationCodeGrant(state: SandboxState, body: Grant<'authorization_code'>): Reply {
  const code = state.codes.get(body.code);
  if (!code) return oauthError(400, 'invalid_grant', 'unknown authorization code');
  if (code.used) {
    // RFC 6749 4.1.2: a replayed code revokes what its first exchange issued.
    if (code.familyId !== null) revokeFamily(state, code.familyId);
    return oauthError(400, 'invalid_grant', 'the authorization code was already used');
  }
  code.used = true;
  if (code.expiresAt <= state.now()) return oauthError(400, 'invalid_grant', 'the authorization code has expired');
  if (code.clientId !== body.client_id) return oauthError(400, 'invalid_grant', 'the code was issued to another client');
  if (code.redirectUri !== body.redirect_uri) {
    return oauthError(400, 'invalid_grant', 'redirect_uri differs from the one of the authorization request');
  }
  if (code.challenge !== null) {
    if (body.code_verifier === undefined) {
      return oauthError(400, 'invalid_grant', 'code_verifier is required: a code_challenge was given at authorization');
    }
    if (s256(body.code_verifier) !== code.challenge) {
      return oauthError(400, 'invalid_grant', 'code_verifier does not match the code_challenge (S256)');
    }
  } else if (body.code_verifier !== undefined) {
    return oauthError(400, 'invalid_grant', 'code_verifier given but no code_challenge was sent at authorization');
  }
  const familyId = newFamily(state);
  code.familyId = familyId;
  return json(200, issueTokens(state, familyId, code.scopes, { withRefresh: true }), NO_STORE);
}

function refreshTokenGrant(state: SandboxState, body: Grant<'refresh_token'>): Reply {
  const record = state.refreshTokens.get(body.refresh_token);
  if (!record) return oauthError(400, 'invalid_grant', 'unknown refresh token');
  if (record.rotated) {
    // RFC 9700 4.14.2: a rotated-out token presented again means it leaked; end the whole login.
    revokeFamily(state, record.familyId);
    state.counters.reuseDetections++;
    return oauthError(400, 'invalid_grant', 'refresh token reuse detected: this refresh token was already rotated out; every token of this login is revoked');
  }
  if (record.revoked) return oauthError(400, 'invalid_grant', 'the refresh token has been revoked');
  record.rotated = true;
  state.counters.refreshes++;
  return json(200, issueTokens(state, record.familyId, record.scopes, { withRefresh: true }), NO_STORE);
}

/** For the store the app is installed on, with a subset of its scopes. */
function clientCredentialsGrant(state: SandboxState, body: Grant<'client_credentials'>): Reply {
  if (body.store_id !== state.store.storeId) {
    return oauthError(400, 'invalid_grant', `the app is not installed on store ${body.store_id}`);
  }
  let scopes: string[] = [...state.store.scopes];
  if (body.scopes !== undefined) {
    const unknown = ungrantedScopes(state, body.scopes);
    if (unknown.length > 0) {
      return oauthError(
        400,
        'invalid_scope',
        `scope ${unknown.join(', ')} was not granted on store ${body.store_id}; granted: ${state.store.scopes.join(' ')}`,
      );
    }
    if (body.scopes.length === 0) return oauthError(400, 'invalid_scope', 'scopes is empty; omit it for every granted scope');
    scopes = [...new Set(body.scopes)];
  }
  return json(200, issueTokens(state, newFamily(state), scopes, { withRefresh: false }), NO_STORE);
}

/** POST /v1/oauth/revoke (RFC 7009): unknown tokens are answered 200 too. */
export function revokeEndpoint(state: SandboxState, ctx: Ctx): Reply {
  const parsed = readJson(ctx);
  if (!parsed.ok) return asOAuth(parsed.reply);
  const checked = validate(RevokeRequest, parsed.value, 'revoke request');
  if (!checked.ok) return asOAuth(checked.reply);
  const body = checked.data;
  const refused = clientError(state, body.client_id, body.client_secret);
  if (refused) return refused;
  const access = state.accessTokens.get(body.token);
  if (access) access.revoked = true;
  // A refresh token ends its whole login: the access tokens issued with it and every later rotation.
  const refresh = state.refreshTokens.get(body.token);
  if (refresh) revokeFamily(state, refresh.familyId);
  state.counters.revocations++;
  return json(200, {}, NO_STORE);
}

function ungrantedScopes(state: SandboxState, scopes: string[]): string[] {
  return scopes.filter((s) => !state.store.scopes.includes(s));
}

// The consent page.

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
function redirectUriMatches(registered: string, given: string): boolean {
  if (!URL.canParse(given)) return false;
  const a = new URL(registered);
  const b = new URL(given);
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
  state.codes.set(code, { ...pending, expiresAt: state.now() + CODE_TTL_MS, used: false, familyId: null });
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
