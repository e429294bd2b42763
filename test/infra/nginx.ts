/**
 * A real nginx gateway in front of a loopback upstream (the sandbox or a server written in the test):
 * plain HTTP or TLS, with nginx's rate limiter, keep-alive settings, redirects, proxy timeouts, and an
 * upstream that can be switched off (502) and on again. nginx runs in the foreground (`daemon off`,
 * master and one worker) on a free loopback port with its config, pid file and logs in a temporary
 * folder; the access log is JSON lines the test reads.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { deadPort, freePort } from './ports.js';
import { probe } from './probe.js';
import { type Daemon, findTool, fixtureDir, isRoot, pollUntil, readText, removeFixtureDir, run, spawnDaemon } from './process.js';

export interface NginxLimitReq {
  /** nginx's rate: `'40r/s'`, `'30r/m'`. The key is the client address (every loopback client shares it). */
  rate: string;
  /** Requests queued (or, with `nodelay`, let through at once) above the rate. Default 0, nginx's default. */
  burst?: number;
  nodelay?: boolean;
  /** `limit_req ... delay=N` (two-stage limiting). */
  delay?: number;
  /** The status of a refused request (`limit_req_status`). Default 503, nginx's default. */
  status?: number;
}

export interface NginxRedirect {
  /** A path prefix (`location ^~ path`): `/v1/orders` redirects `/v1/orders?x=1` too. */
  path: string;
  status: 301 | 302 | 303 | 307 | 308;
  /** The `Location`; may hold nginx variables (`https://elsewhere.test$request_uri`). */
  to: string;
}

export interface NginxOptions {
  /** The upstream's origin, `http://127.0.0.1:PORT` (a sandbox's `url`). Requests keep their path, query and Host. */
  upstream: string;
  /** Listen with TLS using this certificate (a `makeCa()` result fits). */
  tls?: { certFile: string; keyFile: string };
  /** Rate limiting of everything proxied (`limit_req`), off by default. */
  limitReq?: NginxLimitReq;
  /** `keepalive_timeout` as an nginx time (`'1s'`, `'500ms'`, `'0'` closes after each answer). Default nginx's 75s. */
  keepaliveTimeout?: string;
  /** The second argument of `keepalive_timeout`: sends `Keep-Alive: timeout=N` (`'1s'`). Default none, as nginx. */
  keepaliveHeader?: string;
  /** `keepalive_requests`: nginx closes a connection after this many requests. Default 1000. */
  keepaliveRequests?: number;
  /** Paths answered by `return <status> <to>` instead of being proxied (not rate limited). */
  redirects?: NginxRedirect[];
  /** `proxy_connect_timeout`, `proxy_read_timeout` (a 504 when the upstream is slower), `proxy_send_timeout`: nginx times. Default 60s. */
  proxyConnectTimeout?: string;
  proxyReadTimeout?: string;
  proxySendTimeout?: string;
  /** Idle connections kept to the upstream (`keepalive N` with HTTP/1.1). Default 0: one connection per request. */
  upstreamKeepalive?: number;
  /** Raw directives appended to the `http`, `server` and proxied `location /` blocks. */
  httpDirectives?: string;
  serverDirectives?: string;
  locationDirectives?: string;
}

/** One line of the access log. */
export interface NginxAccessEntry {
  /** ISO 8601 time, and seconds since the epoch with milliseconds. */
  time: string;
  msec: number;
  method: string;
  /** The request's path and query as sent (`$request_uri`). */
  uri: string;
  status: number;
  /** Seconds from the first byte read to the last byte written (`$request_time`). */
  requestTime: number;
  /** What the upstream answered (`'502'`, `'200'`), '' when the request never went upstream (refused, redirected). */
  upstreamStatus: string;
  upstreamAddr: string;
  /** nginx's connection serial number and the request's index on it: two requests on one connection share `connection`. */
  connection: number;
  connectionRequests: number;
  bytesSent: number;
  /** `$limit_req_status`: 'PASSED', 'DELAYED', 'REJECTED', … or '' without a limit. */
  limitReq: string;
  host: string;
  userAgent: string;
}

export interface Nginx {
  /** `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  pid: number;
  /** The temporary folder (prefix) holding `nginx.conf`, `access.log`, `error.log`, `nginx.pid`. */
  dir: string;
  confFile: string;
  accessLogFile: string;
  errorLogFile: string;
  /** The options in force (after the last `reconfigure`). */
  options: NginxOptions;
  /** The access log's entries so far (the gateway's own readiness probes are not logged). */
  accessLog(): NginxAccessEntry[];
  /** Waits until at least `count` entries (matching `filter`, when given) are logged and returns those; nginx logs just after answering. */
  waitForAccessLog(count: number, filter?: (entry: NginxAccessEntry) => boolean, timeoutMs?: number): Promise<NginxAccessEntry[]>;
  /** The error log's text (rate-limit refusals, upstream connection failures, reloads). */
  errorLog(): string;
  /**
   * Rewrites the config with `changes` merged in, reloads nginx (SIGHUP) and resolves once every request
   * meets the new config: the new worker answers and the old one has closed its connections and exited
   * (a client's pooled connections are closed by then; requests in flight finish first, 5 s at most).
   */
  reconfigure(changes: Partial<NginxOptions>): Promise<void>;
  /**
   * Points the upstream at a port nothing listens on: every proxied request gets nginx's 502 until
   * `upstreamUp()`. A reload, as in production: nginx closes the client's idle keep-alive connections.
   * For an outage that leaves nginx and those connections alone, put `startUpstreamSwitch()` upstream.
   */
  upstreamDown(): Promise<void>;
  /** Points the upstream back at `options.upstream`. */
  upstreamUp(): Promise<void>;
  /** SIGTERM (fast shutdown), SIGKILL after 3 s; then removes the folder. The logs stay readable through the methods above. */
  stop(): Promise<void>;
}

const LOG_FORMAT = `'{"time":"$time_iso8601","msec":$msec,"method":"$request_method","uri":"$request_uri","status":$status,'
    '"requestTime":$request_time,"upstreamStatus":"$upstream_status","upstreamAddr":"$upstream_addr",'
    '"connection":$connection,"connectionRequests":$connection_requests,"bytesSent":$bytes_sent,'
    '"limitReq":"$limit_req_status","host":"$host","userAgent":"$http_user_agent"}'`;

/** An nginx string argument, quoted; refuses what would break the config. */
function quoted(value: string, what: string): string {
  if (/["\\\n\r;{}]/.test(value)) throw new Error(`nginx fixture: ${what} must not hold quotes, backslashes, semicolons, braces or newlines: ${value}`);
  return `"${value}"`;
}

function upstreamAddress(upstream: string): string {
  const url = new URL(upstream);
  if (url.protocol !== 'http:' || (url.pathname !== '/' && url.pathname !== '') || !url.port) {
    throw new Error(`nginx fixture: upstream must be http://HOST:PORT, got ${upstream}`);
  }
  return url.host;
}

interface ConfigState {
  dir: string;
  port: number;
  generation: string;
  upstreamHost: string;
}

function renderConfig(options: NginxOptions, state: ConfigState): string {
  const { dir, port, generation, upstreamHost } = state;
  const limit = options.limitReq;
  const limitArgs = limit
    ? [
        'zone=infra',
        limit.burst !== undefined ? `burst=${limit.burst}` : '',
        limit.nodelay ? 'nodelay' : '',
        limit.delay !== undefined ? `delay=${limit.delay}` : '',
      ]
        .filter(Boolean)
        .join(' ')
    : '';
  const keepalive = options.keepaliveTimeout ?? (options.keepaliveHeader ? '75s' : undefined);
  const lines = [
    'daemon off;',
    'master_process on;',
    'worker_processes 1;',
    // As root nginx would switch its worker to `nobody`, which cannot enter the private temporary folder.
    isRoot() ? 'user root root;' : '',
    `pid ${join(dir, 'nginx.pid')};`,
    `lock_file ${join(dir, 'nginx.lock')};`,
    `error_log ${join(dir, 'error.log')} notice;`,
    'worker_shutdown_timeout 5s;',
    'events { worker_connections 1024; }',
    'http {',
    `  log_format infra escape=json ${LOG_FORMAT};`,
    `  access_log ${join(dir, 'access.log')} infra;`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, 'temp', kind)};`),
    '  default_type application/octet-stream;',
    limit ? `  limit_req_zone $binary_remote_addr zone=infra:1m rate=${limit.rate};` : '',
    '  upstream backend {',
    `    server ${upstreamHost} max_fails=0;`,
    options.upstreamKeepalive ? `    keepalive ${options.upstreamKeepalive};` : '',
    '  }',
    options.httpDirectives ?? '',
    '  server {',
    `    listen 127.0.0.1:${port}${options.tls ? ' ssl' : ''};`,
    '    server_name localhost;',
    options.tls ? `    ssl_certificate ${options.tls.certFile};\n    ssl_certificate_key ${options.tls.keyFile};\n    ssl_protocols TLSv1.2 TLSv1.3;` : '',
    keepalive ? `    keepalive_timeout ${keepalive}${options.keepaliveHeader ? ` ${options.keepaliveHeader}` : ''};` : '',
    options.keepaliveRequests !== undefined ? `    keepalive_requests ${options.keepaliveRequests};` : '',
    // The fixture's readiness probe: which config generation answers, kept out of the access log.
    `    location = /__infra/generation { access_log off; return 200 "${generation}"; }`,
    ...(options.redirects ?? []).map(
      (r) => `    location ^~ ${quoted(r.path, 'a redirect path')} { return ${r.status} ${quoted(r.to, 'a redirect target')}; }`,
    ),
    options.serverDirectives ?? '',
    '    location / {',
    limit ? `      limit_req ${limitArgs};\n      limit_req_status ${limit.status ?? 503};` : '',
    '      proxy_pass http://backend;',
    '      proxy_next_upstream off;',
    '      proxy_set_header Host $http_host;',
    '      proxy_set_header X-Forwarded-For $remote_addr;',
    '      proxy_set_header X-Forwarded-Proto $scheme;',
    options.upstreamKeepalive ? '      proxy_http_version 1.1;\n      proxy_set_header Connection "";' : '',
    options.proxyConnectTimeout ? `      proxy_connect_timeout ${options.proxyConnectTimeout};` : '',
    options.proxyReadTimeout ? `      proxy_read_timeout ${options.proxyReadTimeout};` : '',
    options.proxySendTimeout ? `      proxy_send_timeout ${options.proxySendTimeout};` : '',
    options.locationDirectives ?? '',
    '    }',
    '  }',
    '}',
  ];
  return `${lines.filter(Boolean).join('\n')}\n`;
}

/** The PIDs of a process's children (nginx's workers), from /proc. */
function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readText(`/proc/${name}/stat`);
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent) pids.push(Number(name));
  }
  return pids;
}

/** True while a process exists and is not a zombie. */
function isRunning(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** Parses JSON lines, skipping a line still being written. */
export function parseJsonLines<T>(text: string): T[] {
  const entries: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as T);
    } catch {}
  }
  return entries;
}

/** Starts nginx in front of `options.upstream` on a free loopback port; stop it with `stop()`. */
export async function startNginx(options: NginxOptions): Promise<Nginx> {
  const nginx = findTool('nginx');
  if (!nginx) throw new Error('nginx is not installed (apt-get install --no-install-recommends nginx)');
  upstreamAddress(options.upstream);
  const dir = fixtureDir('nginx');
  mkdirSync(join(dir, 'temp'));
  const confFile = join(dir, 'nginx.conf');
  const accessLogFile = join(dir, 'access.log');
  const errorLogFile = join(dir, 'error.log');
  const downPort = await deadPort();
  let current: NginxOptions = { ...options };
  let down = false;
  // The readiness probe's answer: unique to this fixture, so another nginx that won the port race never passes for it.
  const token = randomBytes(6).toString('hex');
  let generation = 0;
  let port = 0;
  let daemon: Daemon | undefined;
  let finalAccess: string | undefined;
  let finalError: string | undefined;

  const write = () => {
    const upstreamHost = down ? `127.0.0.1:${downPort}` : upstreamAddress(current.upstream);
    writeFileSync(confFile, renderConfig(current, { dir, port, generation: `${token}-${generation}`, upstreamHost }));
  };
  const scheme = () => (current.tls ? 'https' : 'http');
  const serving = (gen: number) => async () =>
    (await probe(`${scheme()}://127.0.0.1:${port}/__infra/generation`))?.body === `${token}-${gen}` ? true : undefined;
  const args = ['-p', dir, '-c', confFile, '-e', errorLogFile];

  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    write();
    const started = spawnDaemon(nginx, args, dir);
    try {
      await pollUntil(
        async () => (started.hasExited() ? false : await serving(generation)()),
        15_000,
        () => `nginx did not answer on port ${port} within 15 s:\n${readText(errorLogFile)}${started.output()}`,
      ).then((ok) => {
        if (!ok) throw new Error(`nginx exited at start:\n${readText(errorLogFile)}${started.output()}`);
      });
      daemon = started;
      break;
    } catch (error) {
      await started.stop();
      const taken = /Address already in use/.test(readText(errorLogFile) + started.output());
      if (!taken || attempt >= 5) {
        removeFixtureDir(dir);
        throw error;
      }
    }
  }
  const running = daemon;

  const reload = async () => {
    if (running.hasExited()) throw new Error(`nginx has exited:\n${readText(errorLogFile)}`);
    generation++;
    write();
    // A config nginx rejects would leave the old one running: check it first, and say why.
    await run(nginx, ['-t', '-q', ...args]);
    const oldWorkers = childPids(running.pid);
    process.kill(running.pid, 'SIGHUP');
    await pollUntil(serving(generation), 15_000, () => `nginx did not load config generation ${generation} within 15 s:\n${readText(errorLogFile)}`);
    // The old worker still answers on the connections it holds (a client's pooled ones) until it has
    // closed them and exited: after that every request meets the new config.
    await pollUntil(
      () => (oldWorkers.some(isRunning) ? undefined : true),
      15_000,
      () => `nginx's old worker did not exit within 15 s of a reload (a request still in flight?):\n${readText(errorLogFile)}`,
    );
    // Its closes are in our sockets' queues by now: one turn of the event loop lets the client's pool see them.
    await sleep(20);
  };

  const accessText = () => finalAccess ?? readText(accessLogFile);
  const accessLog = () => parseJsonLines<NginxAccessEntry>(accessText());
  return {
    get url() {
      return `${scheme()}://127.0.0.1:${port}`;
    },
    port,
    pid: running.pid,
    dir,
    confFile,
    accessLogFile,
    errorLogFile,
    get options() {
      return current;
    },
    accessLog,
    waitForAccessLog(count, filter = () => true, timeoutMs = 5000) {
      return pollUntil(
        () => {
          const entries = accessLog().filter(filter);
          return entries.length >= count ? entries : undefined;
        },
        timeoutMs,
        () => `nginx logged ${accessLog().filter(filter).length} of ${count} expected requests within ${timeoutMs} ms:\n${accessText()}`,
      );
    },
    errorLog: () => finalError ?? readText(errorLogFile),
    async reconfigure(changes) {
      const previous = current;
      current = { ...current, ...changes };
      try {
        upstreamAddress(current.upstream);
        await reload();
      } catch (error) {
        // Keep the fixture's options in step with the config nginx still runs.
        current = previous;
        write();
        throw error;
      }
    },
    async upstreamDown() {
      down = true;
      await reload();
    },
    async upstreamUp() {
      down = false;
      await reload();
    },
    async stop() {
      if (finalAccess !== undefined) return;
      await running.stop();
      finalAccess = readText(accessLogFile);
      finalError = readText(errorLogFile);
      removeFixtureDir(dir);
    },
  };
}
