/**
 * Which proxy a request goes through, and why (docs/http.md#proxies): the profile's `proxy`
 * setting, else HTTPS_PROXY / HTTP_PROXY / ALL_PROXY (lower case first, as undici and curl read
 * them); `no-proxy` or NO_PROXY lists hosts reached directly (names and their subdomains, `*.`
 * and `.` prefixes, ports, IP addresses and CIDR ranges); loopback is reached directly unless
 * `proxy-loopback` says otherwise. Read from the run's environment (deps.env), never process.env,
 * which main.ts has cleared of proxy passwords. What this adds to undici's `EnvHttpProxyAgent`,
 * which reads the same variables: ALL_PROXY, CIDR ranges, the loopback rule and the reason a route
 * was taken; the requests themselves go through undici's `ProxyAgent` (src/http/transport.ts).
 */
import { BlockList, isIP } from 'node:net';
import { envValue } from '../config/profile.js';
import { UsageError } from '../core/errors.js';
import { safeLine } from '../text/safe.js';

/** The profile's network settings that steer proxies. */
export interface ProxySettings {
  proxy?: string;
  noProxy?: string;
  proxyLoopback?: boolean;
}

/** A proxy and where it was configured. */
export interface ProxyChoice {
  url: URL;
  /** The setting or variable that named it: `HTTPS_PROXY`, `the proxy setting`… */
  source: string;
  /** The URL with its password masked, for messages and traces. */
  shown: string;
}

interface NoProxyEntry {
  text: string;
  /** A host name (lower case, no leading dot): it and its subdomains. */
  host?: string;
  /** An IP address or a CIDR range. */
  addresses?: BlockList;
  port?: number;
}

/** The proxies of a run, read once. */
export interface ProxyConfig {
  http?: ProxyChoice;
  https?: ProxyChoice;
  noProxy: NoProxyEntry[];
  /** `*`: nothing is proxied. */
  noProxyAll: boolean;
  noProxySource?: string;
  proxyLoopback: boolean;
}

/** How one request is sent: through `proxy`, or directly; `reason` says why, for --verbose and `auth status --check`. */
export interface Route {
  proxy?: ProxyChoice;
  reason: string;
}

/** A proxy URL as messages show it: the password (and a token-like user) masked. */
export function maskProxyUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.password) shown.password = '***';
  return shown.href.replace(/\/$/, '');
}

/** The first set (non-empty) variable of `names`, with its name. */
function firstSet(env: Record<string, string | undefined>, names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/** Reads a proxy URL (`host:port` alone is read as http://host:port, as curl does), or exit 2 naming where it came from. */
export function parseProxyUrl(value: string, source: string): URL {
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value) ? value : `http://${value}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch {}
  // Never echo the value: it may hold a password.
  const masked = url ? maskProxyUrl(url) : value.replace(/\/\/[^@/]*@/, '//***@').replace(/^[^/@]*@/, '***@');
  if (!url?.hostname) {
    throw new UsageError(
      `${source} "${masked}" is not a proxy URL.`,
      `Set ${source} to a URL such as http://proxy.example.com:3128 (http://user:password@host:port with a login), or unset it.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(
      `${source} "${masked}" is a ${url.protocol.replace(/:$/, '')} proxy; opcli goes through http:// and https:// proxies only.`,
      `Set ${source} to the http(s) address of the proxy, or unset it.`,
    );
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new UsageError(
      `${source} "${masked}" has a path; a proxy URL is a scheme, a host and a port.`,
      `Set ${source} to a URL such as http://proxy.example.com:3128.`,
    );
  }
  return url;
}

const HOST_LABELS = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** One NO_PROXY entry, or undefined when it can match no host (the caller warns). */
function parseNoProxyEntry(raw: string): NoProxyEntry | undefined {
  const lower = raw.toLowerCase();
  // [v6]:port, host:port (one colon), v4:port; a bare IPv6 address has several colons.
  const split = /^\[([^\]]+)\](?::(\d+))?$/.exec(lower) ?? /^([^:]+):(\d+)$/.exec(lower);
  const text = split ? (split[1] ?? '') : lower;
  const port = split?.[2] === undefined ? undefined : Number(split[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const [address = '', bits] = text.split('/');
  const family = isIP(address);
  if (family) {
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d+$/.test(bits) ? Number(bits) : Number.NaN;
    if (!(prefix <= max)) return undefined;
    const addresses = new BlockList();
    addresses.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return { text: raw, addresses, port };
  }
  const host = text.replace(/^\*?\./, '');
  return HOST_LABELS.test(host) ? { text: raw, host, port } : undefined;
}

/**
 * Reads the proxies of a run from the profile's settings and the environment. A proxy URL that
 * does not parse is a usage error naming its variable or setting; a NO_PROXY entry that cannot
 * match any host is left out with a warning.
 */
export function readProxyConfig(settings: ProxySettings, env: Record<string, string | undefined>, warn: (line: string) => void): ProxyConfig {
  const choose = (names: string[]): ProxyChoice | undefined => {
    if (settings.proxy) {
      const url = parseProxyUrl(settings.proxy, 'The proxy setting');
      return { url, source: 'the proxy setting', shown: maskProxyUrl(url) };
    }
    const found = firstSet(env, names);
    if (!found) return undefined;
    const url = parseProxyUrl(found.value, found.name);
    return { url, source: found.name, shown: maskProxyUrl(url) };
  };
  const https = choose(['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY']);
  const http = choose(['http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY']);
  const fromEnv = settings.noProxy === undefined ? firstSet(env, ['no_proxy', 'NO_PROXY']) : undefined;
  const noProxySource = settings.noProxy !== undefined ? 'the no-proxy setting' : fromEnv?.name;
  const list = (settings.noProxy ?? fromEnv?.value ?? '').split(/[\s,]+/).filter(Boolean);
  const noProxy: NoProxyEntry[] = [];
  let noProxyAll = false;
  for (const raw of list) {
    if (raw === '*') {
      noProxyAll = true;
      continue;
    }
    const entry = parseNoProxyEntry(raw);
    if (entry) noProxy.push(entry);
    else
      warn(
        `Warning: ${noProxySource} entry "${raw}" cannot match any host (expected a host name, .domain, *.domain, an IP address or a CIDR range such as 10.0.0.0/8, with :port if needed); it is ignored.`,
      );
  }
  return { http, https, noProxy, noProxyAll, noProxySource, proxyLoopback: proxyLoopback(settings, env) };
}

/** OPCLI_PROXY_LOOPBACK (1/true/0/false) for this run, else the proxy-loopback setting, else false. */
function proxyLoopback(settings: ProxySettings, env: Record<string, string | undefined>): boolean {
  const raw = envValue(env, 'OPCLI_PROXY_LOOPBACK', [])?.toLowerCase();
  if (raw === undefined) return settings.proxyLoopback === true;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new UsageError(
    `OPCLI_PROXY_LOOPBACK "${safeLine(raw)}" is neither 1 nor 0.`,
    'Set it to 1 (or true) to send loopback requests through the proxy, 0 (or false) not to, or unset it.',
  );
}

/** Whether a host (as URL.hostname gives it) is this machine: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '::1';
}

function matches(entry: NoProxyEntry, host: string, port: number): boolean {
  if (entry.port !== undefined && entry.port !== port) return false;
  if (!entry.addresses) return host === entry.host || host.endsWith(`.${entry.host}`);
  const family = isIP(host);
  return family !== 0 && entry.addresses.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** How a request to `url` is sent: the proxy for its scheme, or directly, with the reason. */
export function routeFor(config: ProxyConfig, url: URL): Route {
  const proxy = url.protocol === 'https:' ? config.https : config.http;
  if (!proxy) return { reason: 'direct (no proxy is configured)' };
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // CHOICE (docs/spec-choices.md#loopback-not-proxied): a proxy cannot reach this machine's loopback.
  if (!config.proxyLoopback && isLoopbackHost(host))
    return { reason: `direct (${host} is loopback; set proxy-loopback to true to send it through ${proxy.shown})` };
  if (config.noProxyAll) return { reason: `direct (${config.noProxySource} is "*")` };
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const entry = config.noProxy.find((e) => matches(e, host, port));
  if (entry) return { reason: `direct (${config.noProxySource} matched "${entry.text}")` };
  return { proxy, reason: `through the proxy ${proxy.shown} (${proxy.source})` };
}
