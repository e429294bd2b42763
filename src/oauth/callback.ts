import { timingSafeEqual, createHash, randomBytes } from 'node:crypto';
import { AuthError, UsageError } from '../core/errors.js';
import { CALLBACK_PATH } from './loopback.js';

/** Words for the OAuth error codes an authorization redirect can carry (RFC 6749 section 4.1.2.1). */
const ERROR_WORDS: Record<string, string> = {
  access_denied: 'the merchant denied access',
  invalid_scope: 'a requested scope is unknown or was not granted to the app',
  invalid_request: 'the authorization request was malformed',
  unauthorized_client: 'this app may not use the authorization code flow',
  unsupported_response_type: 'the server does not support this kind of authorization',
  server_error: 'the authorization server had an error',
  temporarily_unavailable: 'the authorization server is temporarily unavailable',
};

/** The redirect's `state` is missing or not this login's: a stray or forged request, not an answer. */
export class StateMismatchError extends AuthError {}

/** The authorization code of the browser's redirect; its `state` checked before anything else, so a forged code is never exchanged. */
export function codeFromRedirect(url: URL, expectedState: string): string {
  checkState(url, expectedState);
  const q = url.searchParams;
  const error = q.get('error');
  if (error !== null) {
    const words = ERROR_WORDS[error] ?? `the server answered "${error}"`;
    const description = q.get('error_description');
    throw new AuthError(
      `The authorization was refused: ${words}${description ? ` (${description})` : ''}.`,
      error === 'access_denied'
        ? 'Run `opcli auth login` again and choose Approve to log in.'
        : error === 'invalid_scope'
          ? 'Check the scopes (`--scopes` or `opcli config set scopes …`), then run `opcli auth login` again.'
          : 'Run `opcli auth login` again; if it keeps failing, check the app registration.',
    );
  }
  const code = q.get('code');
  if (!code) {
    throw new AuthError('The redirect carried no authorization code. Nothing was exchanged.', 'Start again with `opcli auth login`.');
  }
  return code;
}

/** Refuses a redirect whose `state` is missing or not `expectedState` (StateMismatchError, exit 4). */
export function checkState(url: URL, expectedState: string): void {
  const state = url.searchParams.get('state');
  if (state === null || state === '') {
    throw new StateMismatchError(
      'The redirect carried no `state`: refused as a possible forgery (cross-site request). Nothing was exchanged.',
      'Start again with `opcli auth login`, and use only the link opcli printed.',
    );
  }
  if (!sameText(state, expectedState)) {
    throw new StateMismatchError(
      'The redirect carried a `state` that does not match this login: refused as a possible forgery (cross-site request). Nothing was exchanged.',
      'Start again with `opcli auth login`, and use only the link opcli printed (each login has its own state).',
    );
  }
}

/** The redirect URL a user pasted from the browser's address bar, on the callback path (`codeFromRedirect` checks the rest). */
export function parsePastedRedirect(text: string): URL {
  const trimmed = text.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new UsageError(
      'That is not a URL. Paste the whole address from the browser, starting with http://127.0.0.1:',
      'It looks like http://127.0.0.1:<port>/callback?code=…&state=…',
    );
  }
  if (url.pathname !== CALLBACK_PATH) {
    throw new UsageError(
      `That URL's path is ${url.pathname}, not ${CALLBACK_PATH}: it is not the login redirect.`,
      'Paste the address the browser shows after you approved.',
    );
  }
  return url;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** An OAuth `state` (256 random bits; 128 are needed), and a PKCE code verifier (RFC 7636 section 4.1: 43 characters). */
export function createState(): string {
  return randomBytes(32).toString('base64url');
}
export const createVerifier = createState;

/** The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))). `plain` is never used. */
export function challengeS256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
