/**
 * Loopback ports for the real-infrastructure fixtures. nginx and squid cannot listen on port 0 and
 * tell us the port, so a port is picked for them: at random below the kernel's ephemeral range (where
 * no port-0 listener and no outgoing connection ever lands), checked free by binding it, and never
 * handed out twice by this process. A fixture whose server still finds it taken picks another.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';

const LOWEST = 15_000;
const given = new Set<number>();

function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > LOWEST + 1000) return first;
  } catch {}
  return 32_768;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A loopback port nothing listens on now, outside the ephemeral range, not handed out before by this process. */
export async function freePort(): Promise<number> {
  const top = ephemeralStart();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (top - LOWEST));
    if (given.has(port)) continue;
    given.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error('no free loopback port found in 50 attempts');
}

/**
 * A proxy URL on which nothing listens: connecting to it is refused (ECONNREFUSED). The port is
 * outside the ephemeral range and never handed out again by this process, so it stays dead unless
 * another program binds it on purpose.
 */
export async function deadProxy(): Promise<{ url: string; port: number }> {
  const port = await freePort();
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
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
