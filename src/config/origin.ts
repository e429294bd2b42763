/**
 * Credentials belong to the server they were issued by: a stored login, the client secret and the
 * provider's token each carry the origin (`URL.origin`) they were stored for and go nowhere else,
 * checked before a request is built (docs/guides/configuration.md#what-each-credential-is-bound-to).
 */
import { AuthError } from '../core/errors.js';
import { shellAdvice } from '../core/platform.js';

/** The origin credentials are bound to (`https://api.example.com`, `http://127.0.0.1:8080`); undefined for no URL or a bad one. */
export function originOf(url: string | URL | undefined): string | undefined {
  const origin = url && URL.canParse(String(url)) ? new URL(url).origin : 'null';
  return origin === 'null' ? undefined : origin;
}

/** The token endpoint of a base URL (endpoint 1 of the spec), as it is stored with a login. */
export function tokenUrlOf(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/v1/oauth/token`;
}

/**
 * The origin a credential belongs to: the one stored with it, else CHOICE (docs/spec-choices.md#credentials-of-older-versions):
 * the profile's stored `base-url` setting (never an OPCLI_BASE_URL override) for one stored before opcli recorded origins.
 */
export function boundOrigin(stored: string | undefined, storedBaseUrl: string | undefined): string | undefined {
  return stored ?? originOf(storedBaseUrl);
}

/** Where the base URL in force came from, in the words of a message. */
function whence(source: 'env' | 'profile' | undefined): string {
  return source === 'env' ? ' (from OPCLI_BASE_URL)' : source === 'profile' ? " (the profile's base-url setting)" : '';
}

/** How to go back to the old server, depending on where the new base URL came from. */
function goBack(bound: string, source: 'env' | 'profile' | undefined): string {
  return source === 'env' ? `\`${shellAdvice().unsetEnv('OPCLI_BASE_URL')}\` to use ${bound} again` : `\`opcli config set base-url ${bound}\` to use it again`;
}

/** What a command for `profile` says after `opcli`: nothing for the default profile, else ` --profile NAME`. */
export const profileFlag = (profile: string) => (profile === 'default' ? '' : ` --profile ${profile}`);
/** How a message names `profile` after what happened: nothing for the default profile, else ` (profile "NAME")`. */
export const profileLabel = (profile: string) => (profile === 'default' ? '' : ` (profile "${profile}")`);

/** What a refusal names: the profile, where the base URL in force came from. */
export interface OriginContext {
  profile: string;
  baseUrlSource?: 'env' | 'profile';
  /** The origin of the base URL in force; when the target differs (an absolute URL), the target is named as such. */
  baseOrigin?: string;
}

/** The refusal to send the stored login to `target`, if it belongs elsewhere (`bound` undefined: an older opcli's, with no base-url). */
export function loginRefusal(bound: string | undefined, target: string | undefined, ctx: OriginContext): AuthError | undefined {
  if (target === undefined || bound === target) return undefined;
  const there = target === ctx.baseOrigin ? `the base URL is now ${target}${whence(ctx.baseUrlSource)}` : `the request goes to ${target}`;
  if (bound === undefined) {
    return new AuthError(
      `The login of profile "${ctx.profile}" was stored by an older opcli without the server that issued it, and the profile has no base-url setting to tie it to; ${there}. Nothing was sent.`,
      `Log in again: \`opcli${profileFlag(ctx.profile)} auth login\` (or, if the login is for ${target}, \`opcli${profileFlag(ctx.profile)} config set base-url ${target}\`).`,
    );
  }
  return new AuthError(
    `The login of profile "${ctx.profile}" was issued by ${bound}, but ${there}. opcli sends a token only to the server that issued it, so nothing was sent.`,
    `Log in to ${target}: \`opcli${profileFlag(ctx.profile)} auth login\` (or \`opcli${profileFlag(ctx.profile)} auth logout\` first to end the old login); or ${goBack(bound, ctx.baseUrlSource)}.`,
  );
}

/** The refusal to send the stored client secret to `target`, or undefined when it was stored for it (or is not yet bound). */
export function clientSecretRefusal(bound: string | undefined, target: string | undefined, ctx: OriginContext): AuthError | undefined {
  if (bound === undefined || target === undefined || bound === target) return undefined;
  return new AuthError(
    `The client secret of profile "${ctx.profile}" was stored for ${bound}, but the base URL is now ${target}${whence(ctx.baseUrlSource)}. opcli sends it only to the server it was stored for, so nothing was sent.`,
    `Store the secret of the app at ${target}: \`opcli${profileFlag(ctx.profile)} config set client-secret --stdin\` (or set OPCLI_CLIENT_SECRET for one run), then \`opcli${profileFlag(ctx.profile)} auth login\`; or ${goBack(bound, ctx.baseUrlSource)}.`,
  );
}

/** The refusal to send the provider token to the provider API at `apiUrl`, or undefined when it was stored for it. */
export function providerTokenRefusal(bound: string | undefined, apiUrl: string | undefined): AuthError | undefined {
  const target = originOf(apiUrl);
  if (bound === undefined || target === undefined || bound === target) return undefined;
  return new AuthError(
    `The gift card provider token was stored for ${bound}, but provider-api-url is now ${target}. opcli sends it only to the provider it was stored for, so nothing was sent.`,
    `Give the token for ${target}: \`opcli giftcard setup\` (or \`opcli config set provider-token --stdin\`); or \`opcli config set provider-api-url\` back to ${bound}.`,
  );
}
