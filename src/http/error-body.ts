/**
 * CHOICE (docs/spec-choices.md#error-bodies): the error body is "not shown" by the spec, for the service and for the gift card provider.
 * Real APIs answer `{message}`, `{error}` (a string or an object), `{error_description}`,
 * `{errors: [...]}` (strings or objects with `message`), `{reason}`, plain text or an HTML page.
 * This is the one reader of all of them: every client path that explains a refusal goes through it.
 */

/** What an error body says, whatever its shape. */
export interface ErrorBodyInfo {
  /** The best single sentence to show (untrusted: make it safe before printing). */
  message?: string;
  /** A machine code such as `invalid_grant` or `store_mismatch`, when the body has one. */
  code?: string;
  /** Field errors, when the body lists them with a path. */
  fieldErrors: { path: string; message: string }[];
  /** Every piece of text found in the body, for matching known messages anywhere in it. */
  texts: string[];
}

const MAX_TEXT = 500;
const MAX_ITEMS = 100;

function clip(text: string): string {
  const t = text.trim();
  return t.length > MAX_TEXT ? `${t.slice(0, MAX_TEXT)}…` : t;
}

/** The visible text of an HTML page: its title and body without tags, scripts or styles. */
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

/**
 * What an HTML error page says, on one line: its title once, then whatever else its body says. A
 * gateway's page (nginx: a title, a heading repeating it, a server signature under a rule) is its
 * title alone: `502 Bad Gateway`, not `502 Bad Gateway 502 Bad Gateway nginx/1.22.1`.
 */
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

/** Reads an error body (parsed JSON, or the raw text when it was not JSON) in any common shape. */
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

  // A readable number of them: an error lists at most 50 fields (src/cli/report-error.ts) anyway.
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
