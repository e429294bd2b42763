/**
 * A small loopback upstream for the fixtures' own tests (the real ones put the sandbox behind the
 * gateway): answers every request 200 with a JSON echo of its method, URL and headers, and records it.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listenOnLoopback } from './ports.js';

export interface EchoRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Echo {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** The requests received so far. */
  requests: EchoRequest[];
  close(): Promise<void>;
}

/** Starts the echo server on a free loopback port. */
export async function startEcho(): Promise<Echo> {
  const requests: EchoRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(seen);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(seen));
    });
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
