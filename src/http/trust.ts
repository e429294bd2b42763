/**
 * Which certificate authorities opcli trusts (docs/http.md#trust): Node's own plus the PEM bundle of
 * the `ca-file` setting or OPCLI_CA_FILE; and, after a certificate error, who issued the one met.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import * as tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { readCheckedFile, UnsafePathError } from '../config/private-file.js';
import { envValue } from '../config/profile.js';
import { UsageError } from '../core/errors.js';
import { safeLine } from '../text/safe.js';
import type { ProxyChoice } from './client.js';
import type { PeerCertificate } from './retry.js';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The whole Mozilla root store is about 250 KiB. */
const MAX_CA_BYTES = 4 * 1024 * 1024;

/**
 * The CA file, read the one safe way (src/config/private-file.ts): yours or root's and writable by no
 * one else, since whoever can write it decides which servers opcli trusts. Any other is exit 2.
 */
function readCaText(full: string, source: string): string {
  const fix = `Point ${source} at a PEM file of the certificate authority to trust, or unset it.`;
  let text: string | undefined;
  try {
    text = readCheckedFile(full, 'CA file', { owners: 'me-or-root', maxBytes: MAX_CA_BYTES });
  } catch (error) {
    const shown = safeLine(full);
    if (error instanceof UnsafePathError && /symbolic link/.test(error.message)) {
      throw new UsageError(
        `The CA file ${shown} (${source}) is a symbolic link: opcli does not follow links to the files it trusts.`,
        `Point ${source} at the file the link leads to (\`realpath ${shown}\` shows it), after checking who made the link.`,
      );
    }
    if (error instanceof UnsafePathError) {
      const why = error.message.replace(`The CA file ${full} `, '').replace(/: refused(, not read)?\.$/, '');
      throw new UsageError(`The CA file ${shown} (${source}) ${why}: opcli does not trust it.`, `${error.hint} ${fix}`);
    }
    const code = ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code;
    const why = code === 'EACCES' ? 'cannot be read (permission denied)' : `cannot be read (${code ?? (error as Error).message})`;
    throw new UsageError(`The CA file ${shown} (${source}) ${why}.`, fix);
  }
  if (text === undefined) throw new UsageError(`The CA file ${safeLine(full)} (${source}) does not exist.`, fix);
  return text;
}

/** The certificates of a PEM file, each parsed; a file without one is exit 2 naming it. */
export function readPemBundle(path: string, source: string, cwd: string): string[] {
  const full = isAbsolute(path) ? path : resolve(cwd, path);
  const text = readCaText(full, source);
  const certs = text.match(PEM_CERT) ?? [];
  if (certs.length === 0) {
    throw new UsageError(
      `The CA file ${safeLine(full)} (${source}) holds no PEM certificate (no "-----BEGIN CERTIFICATE-----" block).`,
      'Give the CA certificate in PEM form; convert a DER file with `openssl x509 -inform der -in ca.cer -out ca.pem`.',
    );
  }
  for (const [i, pem] of certs.entries()) {
    try {
      new X509Certificate(pem);
    } catch {
      throw new UsageError(
        `Certificate ${i + 1} of the CA file ${safeLine(full)} (${source}) is not a valid certificate.`,
        'Export the CA certificate again in PEM form.',
      );
    }
  }
  return certs;
}

/** Node's default CA list (bundled roots, NODE_EXTRA_CA_CERTS, the system's when asked), as PEM. */
function defaultCertificates(env: Record<string, string | undefined>): string[] {
  const get = (tls as { getCACertificates?: (type: string) => string[] }).getCACertificates;
  if (get) return get('default');
  // Node before 22.15: the bundled roots, and NODE_EXTRA_CA_CERTS read as Node reads it.
  const extra = env.NODE_EXTRA_CA_CERTS;
  let extraCerts: string[] = [];
  if (extra) {
    try {
      extraCerts = readFileSync(extra, 'utf8').match(PEM_CERT) ?? [];
    } catch {}
  }
  return [...tls.rootCertificates, ...extraCerts];
}

/** The CA list for TLS, or undefined to keep Node's default (no ca-file). */
export function trustedCertificates(setting: string | undefined, env: Record<string, string | undefined>, cwd: string): string[] | undefined {
  // The variable wins over the setting: it is given for this run.
  const fromEnv = envValue(env, 'OPCLI_CA_FILE', []);
  const path = fromEnv || setting;
  if (!path) return undefined;
  return [...defaultCertificates(env), ...readPemBundle(path, fromEnv ? 'OPCLI_CA_FILE' : 'the ca-file setting', cwd)];
}

/** `CN=…, O=…`. */
function distinguishedName(name: Record<string, string | string[]> | undefined): string | undefined {
  if (!name) return undefined;
  const parts = ['CN', 'O', 'OU'].flatMap((k) => {
    const v = name[k];
    return v === undefined ? [] : [`${k}=${Array.isArray(v) ? v.join('+') : v}`];
  });
  return parts.length ? parts.join(', ') : undefined;
}

/**
 * The certificate a server presents, read by a TLS handshake (through the proxy's tunnel when there
 * is one) that trusts it and sends nothing; undefined when it cannot be read.
 */
export function probePeerCertificate(url: URL, proxy: ProxyChoice | undefined, timeoutMs = 5000): Promise<PeerCertificate | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || 443;
  return new Promise((done) => {
    let settled = false;
    const finish = (value: PeerCertificate | undefined, socket?: Duplex) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      done(value);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    timer.unref?.();
    const handshake = (socket?: Duplex) => {
      const servername = isIP(host) ? undefined : host;
      const secure = tls.connect({ host, port, socket, servername, rejectUnauthorized: false });
      secure.once('secureConnect', () => {
        const cert = secure.getPeerCertificate();
        finish(
          cert && Object.keys(cert).length
            ? {
                issuer: distinguishedName(cert.issuer as never),
                subject: distinguishedName(cert.subject as never),
                validTo: cert.valid_to,
                altNames: cert.subjectaltname,
              }
            : undefined,
          secure,
        );
      });
      secure.once('error', () => finish(undefined, secure));
    };
    if (!proxy) return handshake();
    const headers: Record<string, string> = { host: `${url.hostname}:${port}` };
    if (proxy.url.username) {
      headers['proxy-authorization'] =
        `Basic ${Buffer.from(`${decodeURIComponent(proxy.url.username)}:${decodeURIComponent(proxy.url.password)}`).toString('base64')}`;
    }
    if (proxy.url.protocol !== 'http:') return finish(undefined);
    const req = httpRequest({
      host: proxy.url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(proxy.url.port) || 80,
      method: 'CONNECT',
      path: `${url.hostname}:${port}`,
      headers,
    });
    req.once('connect', (res, socket) => (res.statusCode === 200 ? handshake(socket) : finish(undefined, socket)));
    req.once('error', () => finish(undefined));
    req.end();
  });
}
