/**
 * A real squid forward proxy on a free loopback port: loopback clients allowed, plain requests
 * forwarded and CONNECT tunnelled to any loopback port, optional basic auth (squid's
 * basic_ncsa_auth with an MD5-crypt password file made by openssl), an access log the test reads.
 * squid runs in the foreground (`squid -N`) with its config, pid file and logs in a temporary
 * folder, memory cache only; as root it drops to the `proxy` user, who then owns that folder.
 */
import { chownSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { type Daemon, findFile, findTool, fixtureDir, isRoot, pollUntil, readText, removeFixtureDir, run, spawnDaemon } from './process.js';

export interface SquidOptions {
  /** Require basic proxy authentication with this user and password (a 407 without it). */
  auth?: { user: string; password: string };
  /** Refuse every CONNECT with 403: a proxy that does not tunnel. */
  refuseConnect?: boolean;
  /** Raw squid.conf lines, placed before the `http_access` rules. */
  directives?: string;
}

/** One line of squid's access log, written when the transaction ends (for CONNECT, when the tunnel closes). */
export interface SquidAccessEntry {
  /** Seconds since the epoch, with milliseconds. */
  time: number;
  client: string;
  /** `GET`, `POST`, `CONNECT`, … */
  method: string;
  /** The absolute URL of a forwarded request; `host:port` for CONNECT. */
  url: string;
  /** The status squid answered the client (200 for a tunnel, 407 without credentials, 403 refused, 503 upstream unreachable). */
  status: number;
  /** squid's result code: `TCP_TUNNEL`, `TCP_MISS`, `TCP_DENIED`, … */
  result: string;
  /** squid's hierarchy code: `HIER_DIRECT` when it reached the origin, `HIER_NONE` when not. */
  hierarchy: string;
  /** The authenticated user, '' without auth. */
  user: string;
  /** Bytes sent to the client. */
  bytes: number;
  /** Milliseconds the transaction took. */
  durationMs: number;
}

export interface Squid {
  /** `http://127.0.0.1:PORT`, no credentials. */
  url: string;
  /** With `auth`: `http://USER:PASSWORD@127.0.0.1:PORT` (percent-encoded); otherwise `url`. */
  urlWithAuth: string;
  port: number;
  pid: number;
  /** The temporary folder holding `squid.conf`, `access.log`, `cache.log`, `squid.pid`. */
  dir: string;
  confFile: string;
  accessLogFile: string;
  cacheLogFile: string;
  /** The access log's entries so far. */
  accessLog(): SquidAccessEntry[];
  /** Waits until at least `count` entries (matching `filter`, when given) are logged and returns those. A CONNECT is logged when its tunnel closes: close the client's pool first. */
  waitForAccessLog(count: number, filter?: (entry: SquidAccessEntry) => boolean, timeoutMs?: number): Promise<SquidAccessEntry[]>;
  /** squid's own log (start-up, errors). */
  cacheLog(): string;
  /** SIGTERM (squid needs about 2 s to exit), SIGKILL after 5 s; then removes the folder. The logs stay readable. */
  stop(): Promise<void>;
}

const HELPER_DIRS = ['/usr/lib/squid', '/usr/lib64/squid', '/usr/libexec/squid', '/usr/local/libexec/squid'];

/** The user squid drops to when started as root, with its uid and gid. */
function effectiveUser(): { name: string; uid: number; gid: number } {
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['proxy', 'squid', 'nobody']) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(':');
    if (fields) return { name, uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error('squid fixture: no proxy, squid or nobody user to run squid as');
}

/** Parses squid's access log in the fixture's tab-separated format. */
export function parseSquidLog(text: string): SquidAccessEntry[] {
  const entries: SquidAccessEntry[] = [];
  const decode = (value: string) => {
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  };
  for (const line of text.split('\n')) {
    const f = line.split('\t');
    if (f.length !== 10) continue;
    const at = (i: number) => f[i] ?? '';
    entries.push({
      time: Number(at(0)),
      client: at(1),
      method: at(2),
      url: decode(at(3)),
      status: Number(at(4)),
      result: at(5),
      hierarchy: at(6),
      user: at(7) === '-' ? '' : decode(at(7)),
      bytes: Number(at(8)),
      durationMs: Number(at(9)),
    });
  }
  return entries;
}

/** Starts squid as a forward proxy on a free loopback port; stop it with `stop()`. */
export async function startSquid(options: SquidOptions = {}): Promise<Squid> {
  const squid = findTool('squid');
  if (!squid) throw new Error('squid is not installed (apt-get install --no-install-recommends squid)');
  const dir = fixtureDir('squid');
  const confFile = join(dir, 'squid.conf');
  const accessLogFile = join(dir, 'access.log');
  const cacheLogFile = join(dir, 'cache.log');
  const authLines: string[] = [];
  if (options.auth) {
    const { user, password } = options.auth;
    if (!/^[\w.-]+$/.test(user)) throw new Error(`squid fixture: auth user must be letters, digits, '.', '_' or '-': ${user}`);
    const helper = findFile(HELPER_DIRS.map((d) => join(d, 'basic_ncsa_auth')));
    if (!helper) throw new Error(`squid fixture: basic_ncsa_auth not found in ${HELPER_DIRS.join(', ')}`);
    const openssl = findTool('openssl');
    if (!openssl) throw new Error('squid fixture: auth needs openssl (apt-get install openssl)');
    // MD5-crypt: basic_ncsa_auth checks it itself, whatever the system's crypt() supports.
    const hash = (await run(openssl, ['passwd', '-1', '-stdin'], `${password}\n`)).trim();
    const passwordFile = join(dir, 'passwd');
    writeFileSync(passwordFile, `${user}:${hash}\n`, { mode: 0o600 });
    authLines.push(
      `auth_param basic program ${helper} ${passwordFile}`,
      'auth_param basic children 2 startup=1 idle=1',
      'auth_param basic realm opcli test proxy',
      'acl authenticated proxy_auth REQUIRED',
    );
  }
  const runAs = isRoot() ? effectiveUser() : undefined;

  const config = (port: number) =>
    [
      `http_port 127.0.0.1:${port}`,
      runAs ? `cache_effective_user ${runAs.name}` : '',
      `pid_filename ${join(dir, 'squid.pid')}`,
      `cache_log ${cacheLogFile}`,
      // Tab-separated, strings URL-encoded (%#): time, client, method, URL, status, result, hierarchy, user, bytes, ms.
      'logformat infra %ts.%03tu\t%>a\t%rm\t%#ru\t%>Hs\t%Ss\t%Sh\t%#un\t%<st\t%tr',
      `access_log stdio:${accessLogFile} infra`,
      'buffered_logs off',
      'strip_query_terms off',
      'cache deny all',
      'cache_mem 1 MB',
      `coredump_dir ${dir}`,
      'netdb_filename none',
      'pinger_enable off',
      'shutdown_lifetime 0 seconds',
      'visible_hostname opcli-test-proxy',
      ...authLines,
      options.directives ?? '',
      options.refuseConnect ? 'http_access deny CONNECT' : '',
      options.auth ? 'http_access deny !authenticated' : '',
      // `localhost` is squid's built-in ACL for 127.0.0.1 and ::1; any port may be tunnelled to.
      'http_access allow localhost',
      'http_access deny all',
    ]
      .filter(Boolean)
      .join('\n') + '\n';

  let daemon: Daemon | undefined;
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    writeFileSync(confFile, config(port));
    if (runAs) for (const file of ['.', ...readdirSync(dir)]) chownSync(join(dir, file), runAs.uid, runAs.gid);
    writeFileSync(cacheLogFile, '');
    if (runAs) chownSync(cacheLogFile, runAs.uid, runAs.gid);
    const started = spawnDaemon(squid, ['-N', '-d', '1', '-f', confFile], dir);
    const listening = new RegExp(`Accepting HTTP Socket connections at .*local=127\\.0\\.0\\.1:${port}\\b`);
    try {
      const ok = await pollUntil(
        () => (started.hasExited() ? false : listening.test(readText(cacheLogFile)) ? true : undefined),
        15_000,
        () => `squid did not listen on port ${port} within 15 s:\n${readText(cacheLogFile)}${started.output()}`,
      );
      if (!ok) throw new Error(`squid exited at start:\n${readText(cacheLogFile)}${started.output()}`);
      daemon = started;
      break;
    } catch (error) {
      await started.stop(500);
      const taken = /Address already in use/.test(readText(cacheLogFile) + started.output());
      if (!taken || attempt >= 5) {
        removeFixtureDir(dir);
        throw error;
      }
    }
  }
  const running = daemon;
  let finalAccess: string | undefined;
  let finalCache: string | undefined;
  const accessLog = () => parseSquidLog(finalAccess ?? readText(accessLogFile));
  const url = `http://127.0.0.1:${port}`;
  const urlWithAuth = options.auth ? `http://${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.password)}@127.0.0.1:${port}` : url;
  return {
    url,
    urlWithAuth,
    port,
    pid: running.pid,
    dir,
    confFile,
    accessLogFile,
    cacheLogFile,
    accessLog,
    waitForAccessLog(count, filter = () => true, timeoutMs = 5000) {
      return pollUntil(
        () => {
          const entries = accessLog().filter(filter);
          return entries.length >= count ? entries : undefined;
        },
        timeoutMs,
        () => `squid logged ${accessLog().filter(filter).length} of ${count} expected requests within ${timeoutMs} ms:\n${readText(accessLogFile)}`,
      );
    },
    cacheLog: () => finalCache ?? readText(cacheLogFile),
    async stop() {
      if (finalAccess !== undefined) return;
      await running.stop(5000);
      finalAccess = readText(accessLogFile);
      finalCache = readText(cacheLogFile);
      removeFixtureDir(dir);
    },
  };
}
