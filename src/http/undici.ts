/**
 * undici's whole index, for the demo tour's plain `request()` (src/commands/demo/index.ts, which
 * loads this module only when the tour runs). The HTTP core never loads it: src/http/transport.ts
 * imports undici's `Agent` module alone.
 */
import * as undici from 'undici';

/** undici's index (async for its callers, which load this module on use). */
export async function loadUndici(): Promise<typeof import('undici')> {
  return undici;
}
