import { setFlagsFromString } from 'node:v8';

/**
 * Loads undici. It is CommonJS: once bundled into the ES module build its exports sit under
 * `default`, while under vitest (unbundled) they are named exports. Both work through this.
 */
export async function loadUndici(): Promise<typeof import('undici')> {
  const mod = (await import('undici')) as typeof import('undici') & { default?: typeof import('undici') };
  return mod.Agent ? mod : (mod.default as typeof import('undici'));
}

/**
 * Loads undici's `Agent` alone, the HTTP core's pool: its own module rather than undici's index,
 * which also builds fetch, WebSocket, the cache and the mocks at load (half the bundle, most of the
 * load cost of a one-off; docs/benchmarks.md#figures-of-27-november-2026-one-http-engine).
 */
export async function loadAgent(): Promise<typeof import('undici').Agent> {
  // undici parses HTTP with llhttp built to WebAssembly. By default V8 compiles it twice, the second
  // time with its optimising compiler in the background: for a one-off that doubled the process's
  // CPU and added ~35 MiB of peak memory for a parser that reads a few kilobytes. Liftoff alone
  // (what the bin shim already passes to long runs) compiles it once, before the first request.
  setFlagsFromString('--liftoff-only');
  const mod = (await import('undici/lib/dispatcher/agent.js')) as { default: typeof import('undici').Agent };
  return mod.default;
}

/**
 * Loads undici's `ProxyAgent` alone, only when a request goes through a proxy (docs/http.md#proxies).
 * It opens its tunnels with `Dispatcher.prototype.connect`, which undici's index adds: added here
 * the same way, without loading the index.
 */
export async function loadProxyAgent(): Promise<typeof import('undici').ProxyAgent> {
  setFlagsFromString('--liftoff-only');
  const [proxyAgent, dispatcher, connect] = await Promise.all([
    import('undici/lib/dispatcher/proxy-agent.js') as Promise<{ default: typeof import('undici').ProxyAgent }>,
    import('undici/lib/dispatcher/dispatcher.js') as Promise<{ default: { prototype: { connect?: unknown } } }>,
    import('undici/lib/api/api-connect.js') as Promise<{ default: unknown }>,
  ]);
  dispatcher.default.prototype.connect ??= connect.default;
  return proxyAgent.default;
}
