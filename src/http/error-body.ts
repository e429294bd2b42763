/**
 * What an answer that is not a success means: the typed error of a 3xx or an error status, its
 * words, whether a POST answered so was processed (docs/http.md#what-is-resent-and-what-never-is);
 * and what its body says, whatever its shape (`readErrorBody`, the one reader).
 *
 * CHOICE (docs/spec-choices.md#error-bodies): the spec does not show error bodies. Real APIs answer
 * `{message}`, `{error}` (a string or an object), `{error_description}`, `{errors: [...]}`,
 * `{reason}`, plain text or an HTML page.
 */
import { CHECK_ONE_CLAIM } from '../core/claim-check.js';
import { ApiError, ExitCode, RedirectError } from '../core/errors.js';
import { safeLine, safeText } from '../text/safe.js';
import { isIdempotent, type Method } from './retry.js';

/** A message to be continued with "; …": without its closing full stop. */
export function clause(message: string): string {
  return message.replace(/\.+$/, '');
}

/** An answer as the client read it: the body JSON when it parsed, else text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * A 401 that says `invalid_token` (RFC 6750, in the body or WWW-Authenticate) or names no reason.
 * Another 401 (a refused client) is not cured by a refresh, which would rotate the pair for nothing.
 */
export function isInvalidToken(res: RawResponse): boolean {
  const bodyError = (res.body as { error?: unknown } | undefined)?.error;
  const challenge = res.headers['www-authenticate'] ?? '';
  if (bodyError === 'invalid_token' || /error="?invalid_token/i.test(challenge)) return true;
  return bodyError === undefined && !/error=/i.test(challenge);
}

/**
 * A 3xx is never followed. For a POST, a 307 or 308 means not processed (it asks for the same
 * request elsewhere); another 3xx leaves its fate unknown.
 */
export function buildRedirectError(method: Method, url: URL, status: number, body: unknown, headers: Record<string, string>): RedirectError {
  const raw = headers.location;
  const location = raw === undefined ? undefined : safeLine(raw.length > 300 ? `${raw.slice(0, 300)}…` : raw);
  const notProcessed = status === 307 || status === 308;
  const uncertain = !isIdempotent(method) && !notProcessed;
  const fate = isIdempotent(method) ? '' : notProcessed ? ' The request was not processed.' : ' The request may have been processed.';
  return new RedirectError({
    status,
    method,
    url: url.toString(),
    body,
    headers,
    location,
    uncertain,
    message: `${method} ${url.pathname} answered ${status} (a redirect${location ? ` to ${location}` : ', no Location header'}), not a success; opcli does not follow redirects.${fate}`,
    hint: 'Check the base URL (https, host, no extra path) with `opcli config get base-url`; a gateway or proxy in front of the service may be redirecting.',
  });
}

interface Words {
  message: string;
  exitCode?: ExitCode;
  hint?: string;
}

/** How a user finds out whether a POST to `path` was processed: what it created, and where to look. */
function checkFor(path: string): { subject: string; done: string; check: string } {
  if (path.startsWith('/v1/claims/')) {
    return {
      subject: 'the claim',
      done: 'filed',
      check: `before sending it again, ${CHECK_ONE_CLAIM}`,
    };
  }
  return { subject: 'the request', done: 'processed', check: 'check before sending it again' };
}

/** The typed error of a non-2xx answer, with advice for the statuses a user meets. */
export function buildApiError(method: string, url: URL, status: number, body: unknown, headers: Record<string, string> = {}, notProcessed = false): ApiError {
  // Server text is made safe for a terminal before it joins a message.
  const info = readErrorBody(body);
  const fieldErrors = info.fieldErrors.map((e) => ({ path: safeLine(e.path), message: safeLine(e.message) }));
  const detail = info.message === undefined ? undefined : safeText(info.message);
  const where = `${method} ${url.pathname}`;
  const words =
    refusalWords(where, status, detail, body, headers, fieldErrors) ??
    failureWords(where, status, detail, !isIdempotent(method as Method) && !notProcessed ? url.pathname : undefined, notProcessed);
  return new ApiError({ status, method, url: url.toString(), body, code: info.code, fieldErrors, headers, notProcessed, ...words });
}

/** A refusal the user can act on: invalid fields, no login, a missing scope, not found, rate limited. */
function refusalWords(
  where: string,
  status: number,
  detail: string | undefined,
  body: unknown,
  headers: Record<string, string>,
  fieldErrors: { path: string; message: string }[],
): Words | undefined {
  if (status === 400 || status === 422) {
    const fields = fieldErrors.map((e) => `\n  ${e.path || '(body)'}: ${e.message}`).join('');
    return {
      message: `${where} was refused (${status})${detail ? `: ${detail}` : ''}${fields}`,
      exitCode: ExitCode.usage,
      hint: 'Correct the fields named above and try again; nothing was changed on the server.',
    };
  }
  if (status === 401) {
    return {
      message: `${where} was refused: not authenticated (401)${detail ? `: ${detail}` : ''}`,
      exitCode: ExitCode.auth,
      hint: 'Run `opcli auth login` to log in again.',
    };
  }
  if (status === 403) {
    const required = (body as { required_scope?: unknown } | null)?.required_scope;
    const scope = typeof required === 'string' ? safeLine(required) : undefined;
    return {
      message: scope
        ? `${where} is forbidden: the token lacks the scope "${scope}", which the merchant did not grant (403).`
        : `${where} is forbidden: the token lacks a scope this endpoint needs (403)${detail ? `: ${detail}` : ''}.`,
      exitCode: ExitCode.auth,
      hint: scope
        ? `Log in again asking for it: \`opcli auth login --scopes ${scope}\` (the merchant must approve it).`
        : 'Log in again with the scopes this command needs; the merchant must approve them.',
    };
  }
  if (status === 404) return { message: `${where}: not found (404)${detail ? `: ${detail}` : ''}` };
  if (status === 429) {
    const after = headers['retry-after'];
    return {
      message: `${where} was rate limited (429)${after ? `; the server asks to wait ${after}s` : ''}.`,
      hint: after ? `Try again in ${after} seconds.` : 'Try again in a minute.',
    };
  }
  return undefined;
}

/**
 * Any other failure. `uncertainPath`: a POST whose fate the answer leaves open. A gateway answers
 * 502 alike when it could not connect (nothing sent) and when the service closed the connection
 * after reading the request (nginx's proxy_next_upstream "error" covers both).
 */
function failureWords(where: string, status: number, detail: string | undefined, uncertainPath: string | undefined, notProcessed: boolean): Words {
  // An HTML page's title usually repeats the status ("503 Service Temporarily Unavailable"): said once.
  const answered = detail?.startsWith(`${status} `) ? clause(detail) : `${status}${detail ? `: ${clause(detail)}` : ''}`;
  const message = `${where} failed: the server answered ${answered}.`;
  if (status === 502 && uncertainPath !== undefined) {
    const { subject, done, check } = checkFor(uncertainPath);
    return {
      message: `${message} The gateway in front of the service could not reach it or lost it mid-request: ${subject} was probably not ${done}, but may have been; ${check}. If your gateway answers 502 only before it forwards a request, add 502 to the profile's not-processed-statuses.`,
      hint: 'Check whether it was processed before sending it again. Only if the gateway answers 502 before forwarding anything: `opcli config set not-processed-statuses 429,502`.',
    };
  }
  return {
    message: `${message}${notProcessed ? ' It was not processed.' : ''}`,
    hint: status >= 500 ? 'The service had a problem; try again later.' : undefined,
  };
}

/** What an error body says (untrusted text: make it safe before printing). */
export interface ErrorBodyInfo {
  message?: string;
  /** `invalid_grant`, `store_mismatch`… */
  code?: string;
  fieldErrors: { path: string; message: string }[];
  /** Every piece of text in the body, for matching known messages anywhere in it. */
  texts: string[];
}

const MAX_TEXT = 500;
const MAX_ITEMS = 100;

function clip(text: string): string {
  const t = text.trim();
  return t.length > MAX_TEXT ? `${t.slice(0, MAX_TEXT)}…` : t;
}

/** An HTML page's text without tags, scripts or styles. */
function htmlText(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** An HTML error page on one line: its title once, then the rest; nginx's page is `502 Bad Gateway` alone, no signature. */
function pageSays(html: string): string {
  const title = htmlText(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '');
  let main = html.replace(/<head[\s\S]*?<\/head>/i, ' ').replace(/<title[^>]*>[\s\S]*?<\/title>/i, ' ');
  // A short line under the last rule is a signature (`nginx/1.22.1`, `Apache/2.4 Server at …`).
  const rule = main.search(/<hr\b[^>]*>(?![\s\S]*<hr\b)/i);
  if (rule >= 0 && htmlText(main.slice(rule)).length <= 100) main = main.slice(0, rule);
  let rest = htmlText(main);
  if (title) rest = rest.split(title).join(' ').replace(/\s+/g, ' ').trim();
  return clip(title && rest ? `${title}: ${rest}` : title || rest);
}

/** Reads an error body (parsed JSON, or the text) in any common shape. */
export function readErrorBody(body: unknown): ErrorBodyInfo {
  const texts: string[] = [];
  const fieldErrors: { path: string; message: string }[] = [];
  if (body === undefined || body === null) return { fieldErrors, texts };
  if (typeof body === 'string') {
    const looksHtml = /^\s*<(!doctype|html|head|body|\?xml)/i.test(body) || /<\/(html|body|p|h1|title)>/i.test(body);
    const text = clip(looksHtml ? htmlText(body) : body);
    if (text) texts.push(text);
    return { message: (looksHtml ? pageSays(body) : '') || text || undefined, fieldErrors, texts };
  }
  if (Array.isArray(body)) return readErrorBody({ errors: body });
  if (!isRecord(body)) {
    const text = clip(String(body));
    return { message: text, fieldErrors, texts: [text] };
  }
  let code: string | undefined;
  const messages: string[] = [];
  const add = (value: unknown, primary = true) => {
    const s = str(value);
    if (!s) return;
    texts.push(clip(s));
    if (primary) messages.push(clip(s));
  };

  // `error` is an OAuth code (`invalid_grant`), a sentence ("API key not found"), or an object.
  const error = body.error;
  if (typeof error === 'string') {
    if (/^[a-z][a-z0-9_.-]*$/.test(error) && error.includes('_')) code = error;
    add(error, !code);
  } else if (isRecord(error)) {
    const inner = readErrorBody(error);
    texts.push(...inner.texts);
    fieldErrors.push(...inner.fieldErrors);
    if (inner.message) messages.push(inner.message);
    code ??= inner.code;
  }
  add(body.error_description);
  add(body.message);
  add(body.detail);
  add(body.title, messages.length === 0);
  add(body.reason);
  if (typeof body.code === 'string' && !code) code = body.code;
  else add(typeof body.code === 'string' ? body.code : undefined, false);

  const list = (
    Array.isArray(body.errors)
      ? body.errors
      : isRecord(body.errors)
        ? Object.entries(body.errors).map(([path, v]) => ({ path, message: Array.isArray(v) ? v.slice(0, MAX_ITEMS).join('; ') : v }))
        : []
  ).slice(0, MAX_ITEMS);
  const loose: string[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      add(item, false);
      loose.push(clip(item));
    } else if (isRecord(item)) {
      const message = str(item.message) ?? str(item.detail) ?? str(item.error) ?? str(item.title);
      const path = str(item.path) ?? str(item.field) ?? str(item.param) ?? (Array.isArray(item.path) ? item.path.join('.') : undefined) ?? str(item.pointer);
      if (message) {
        texts.push(clip(message));
        if (path !== undefined) fieldErrors.push({ path, message: clip(message) });
        else loose.push(clip(message));
      }
      if (!code && typeof item.code === 'string') code = item.code;
    }
  }
  const message = messages[0] ?? (loose.length ? loose.join('; ') : undefined) ?? (fieldErrors.length ? undefined : code);
  return { message, code, fieldErrors, texts };
}

/** Whether `phrase` appears anywhere in the body's text, case-insensitively. */
export function bodySays(info: ErrorBodyInfo, phrase: string): boolean {
  const needle = phrase.toLowerCase();
  return info.texts.some((t) => t.toLowerCase().includes(needle)) || info.code?.toLowerCase() === needle;
}
