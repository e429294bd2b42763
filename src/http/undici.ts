/**
 * Loads undici's whole index, for the demo tour's plain `request()` (src/commands/demo/tour-io.ts).
 * The HTTP core never loads it: src/http/transport.ts imports undici's `Agent` module alone.
 * It is CommonJS: once bundled into the ES module build its exports sit under `default`, while
 * under vitest (unbundled) they are named exports. Both work through this.
 */
export async function loadUndici(): Promise<typeof import('undici')> {
  const mod = (await import('undici')) as typeof import('undici') & { default?: typeof import('undici') };
  return mod.Agent ? mod : (mod.default as typeof import('undici'));
}
