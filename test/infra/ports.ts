/**
 * Loopback ports for the real-infrastructure fixtures. nginx and squid cannot listen on port 0 and
 * tell us the port, so a port is picked for them: at random below the kernel's ephemeral range (where
 * no port-0 listener and no outgoing connection ever lands), checked free by binding it, and never
 * handed out twice by this process. A fixture whose server still finds it taken picks another.
 * Ports meant to stay dead (`deadProxy()`, nginx's switched-off upstream) come from a range of their
 * own, where no fixture of any test process ever listens.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';

const LOWEST = 15_000;
const given = new Set<number>();

/** [first, end) of the listening range and of the dead range. */
function ranges(): { listen: [number, number]; dead: [number, number] } {
  let top = 32_768;
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > LOWEST + 2000) top = first;
  } catch {}
  const middle = LOWEST + Math.floor(((top - LOWEST) * 2) / 3);
  return { listen: [LOWEST, middle], dead: [middle, top] };
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

async function pick([first, end]: [number, number]): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * (end - first));
    if (given.has(port)) continue;
    given.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port found in ${first}-${end - 1} in 50 attempts`);
}

/** Starts `server` on a free loopback port and returns the port. */
export async function listenOnLoopback(server: {
  once(event: 'error', fn: (error: Error) => void): unknown;
  listen(port: number, host: string, fn: () => void): unknown;
  address(): unknown;
}): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as { port?: number } | string | null;
  return typeof address === 'object' && address?.port ? address.port : 0;
}

/** A loopback port to listen on: nothing listens on it now, outside the ephemeral range, not handed out before by this process. */
export function freePort(): Promise<number> {
  return pick(ranges().listen);
}

/** A loopback port nothing listens on, from the range no fixture listens in: connecting to it is refused. */
export function deadPort(): Promise<number> {
  return pick(ranges().dead);
}

/**
 * A proxy URL on which nothing listens: connecting to it is refused (ECONNREFUSED). Its port comes
 * from a range where no fixture listens and the kernel assigns no port, so it stays dead unless
 * another program binds it on purpose.
 */
export async function deadProxy(): Promise<{ url: string; port: number }> {
  const port = await deadPort();
  return { url: `http://127.0.0.1:${port}`, port };
}

export interface Blackhole {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Destroys the held connections and stops listening. */
  close(): Promise<void>;
}

/**
 * A loopback server that accepts connections and never answers (a frozen service): as nginx's
 * upstream it gives a 504 after `proxyReadTimeout`; as a proxy or server, a request that hangs.
 */
export async function blackhole(): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
