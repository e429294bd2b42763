/**
 * One plain request on a fresh connection, for the fixtures' own readiness checks (no pooled
 * connection, certificates not checked): the status and body, or undefined when it failed.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** GETs `url` once on a new connection; undefined when the connection or the request fails. */
export function probe(url: string, timeoutMs = 2000): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { agent: false, rejectUnauthorized: false, timeout: timeoutMs, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}
