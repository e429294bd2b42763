/**
 * A TCP relay in front of an upstream (the sandbox), to put between nginx and it: `down()` stops
 * listening, so nginx's connections are refused and it answers 502 at once; `freeze()` accepts and
 * holds every byte both ways (nginx answers 504 after its `proxyReadTimeout`) and `up()` delivers what
 * was held, as a service waking up would: requests nginx gave up on still reach the upstream. nginx
 * and the client's connections to it are never touched, unlike `Nginx.upstreamDown()`, which reloads.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './ports.js';

export type SwitchMode = 'up' | 'down' | 'frozen';

export interface UpstreamSwitch {
  /** `http://127.0.0.1:PORT`: give it to `startNginx({ upstream })`. */
  url: string;
  port: number;
  mode(): SwitchMode;
  /** Connections accepted so far (one per proxied request with nginx's default HTTP/1.0 upstream). */
  accepted(): number;
  /** Stops listening: new connections are refused; connections already open carry on (after `freeze()`, they are reset). */
  down(): Promise<void>;
  /** Holds every byte of every connection, open and new, in both directions. */
  freeze(): Promise<void>;
  /** Listens again (after `down`) or delivers what was held (after `freeze`), in order. */
  up(): Promise<void>;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

interface Direction {
  to: Socket;
  held: Buffer[];
  ended: boolean;
}

/** Starts a relay on a free loopback port forwarding to `target` (`http://127.0.0.1:PORT`). */
export async function startUpstreamSwitch(target: string): Promise<UpstreamSwitch> {
  const { hostname, port: targetPort } = new URL(target);
  let mode: SwitchMode = 'up';
  let accepted = 0;
  const directions = new Set<Direction>();
  const sockets = new Set<Socket>();

  const flush = (d: Direction) => {
    if (d.to.destroyed) return;
    for (const chunk of d.held.splice(0)) d.to.write(chunk);
    if (d.ended) d.to.end();
  };
  const forward = (from: Socket, to: Socket) => {
    const d: Direction = { to, held: [], ended: false };
    directions.add(d);
    from.on('data', (chunk: Buffer) => {
      if (mode === 'frozen' || d.held.length > 0) d.held.push(chunk);
      else to.write(chunk);
    });
    // A side that closes ends the other gracefully, after what is held: a frozen service still reads
    // a request whose client has gone.
    from.on('close', () => {
      d.ended = true;
      if (mode !== 'frozen') flush(d);
    });
    to.on('close', () => directions.delete(d));
  };
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };

  const relay = (client: Socket) => {
    accepted++;
    const upstream = connect(Number(targetPort), hostname);
    track(client);
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
  };
  // A new server for each listen: a closed one finishes closing only when its last connection has.
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer(relay);
      next.once('error', reject);
      next.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
        next.off('error', reject);
        server = next;
        resolve();
      });
    });
  const stopListening = async () => {
    server?.close();
    server = undefined;
    await new Promise((resolve) => setImmediate(resolve));
  };

  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await listen();
      break;
    } catch (error) {
      if (attempt >= 5) throw error;
    }
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    mode: () => mode,
    accepted: () => accepted,
    async down() {
      // A frozen service that goes down loses what it held: those connections are reset.
      if (mode === 'frozen') for (const socket of sockets) socket.destroy();
      mode = 'down';
      await stopListening();
    },
    async freeze() {
      if (!server) await listen();
      mode = 'frozen';
    },
    async up() {
      if (!server) await listen();
      mode = 'up';
      for (const d of directions) flush(d);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await stopListening();
    },
  };
}
