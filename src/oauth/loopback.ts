import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { UsageError } from '../core/errors.js';
import { escapeHtml } from '../text/safe.js';

/** The path of the redirect URI, as the app registers it (`http://127.0.0.1/callback`, any port). */
export const CALLBACK_PATH = '/callback';

/** What the browser's redirect was judged to be; the page shown to the user follows from it. */
export type CallbackOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: Error /** Not this login's redirect: answer it and keep waiting. */; keepWaiting?: boolean };

/**
 * Listens on 127.0.0.1 (never `localhost`, RFC 8252 section 7.3) for the one redirect of an
 * authorization: each GET /callback is judged and answered with a static page that never echoes the
 * code; the first that is this login's answer settles `outcome`, strays (`keepWaiting`) are ignored.
 */
export async function startCallbackServer<T>(options: {
  port?: number;
  /** Never throws: a redirect that is not a code is an outcome. */
  judge: (url: URL) => CallbackOutcome<T>;
  /** Called for each request judged `keepWaiting` (a stray or forged callback). */
  onIgnored?: (error: Error) => void;
}) {
  let settle: (outcome: CallbackOutcome<T>) => void = () => {};
  const outcome = new Promise<CallbackOutcome<T>>((resolve) => {
    settle = resolve;
  });
  let answered = false;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH || answered) {
      // Browsers also ask for /favicon.ico; only the callback counts.
      res.writeHead(404, { ...PAGE_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    const judged = options.judge(url);
    if (!judged.ok && judged.keepWaiting) {
      res.writeHead(400, PAGE_HEADERS).end(page('Not this login', `${judged.error.message} opcli is still waiting for the login it started.`));
      options.onIgnored?.(judged.error);
      return;
    }
    answered = true;
    res.writeHead(judged.ok ? 200 : 400, PAGE_HEADERS);
    res.end(
      judged.ok
        ? page('Authorization received', 'opcli is finishing the login. Return to the terminal to see the result; you can close this tab.')
        : page('Login failed', judged.error.message),
    );
    res.on('close', () => settle(judged));
    res.on('finish', () => settle(judged));
  });
  server.listen({ host: '127.0.0.1', port: options.port ?? 0, exclusive: true });
  try {
    await once(server, 'listening');
  } catch (error) {
    const port = options.port ?? 0;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new UsageError(
        `Port ${port} on 127.0.0.1 is already in use, so the login callback cannot listen there.`,
        'Stop the program using it, or pass another --port (one your app registration allows), or leave --port out for a free one.',
      );
    }
    if (code === 'EACCES') throw new UsageError(`Not allowed to listen on port ${port} of 127.0.0.1.`, 'Pick a port above 1023 with --port.');
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  let closing: Promise<void> | undefined;
  return {
    // The same string goes into the authorization and token requests.
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    /** Settles with the judgement of the first request to /callback that is this login's. */
    outcome,
    /** Stops listening and drops every connection, so the port refuses connections at once. */
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  connection: 'close',
};

/** A self-contained page: inline style only, nothing fetched, nothing from the query echoed but the judged message. */
function page(title: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>opcli: ${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}</style></head>
<body><h1>${escapeHtml(title)}</h1><p id="message">${escapeHtml(message)}</p></body></html>
`;
}
