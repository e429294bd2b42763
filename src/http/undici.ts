/**
 * undici's index, its public entry, in a module of its own so that it loads on use: for the
 * `ProxyAgent` of a request that goes through a proxy (src/http/transport.ts) and the demo tour's
 * `request()`. A one-off without a proxy never loads it (ARCHITECTURE.md, the HTTP transport's fast
 * path). Names re-exported from an ES module: bundled, `import('undici')` of the CommonJS package
 * would give its `default` alone.
 */
export { ProxyAgent, request } from 'undici';
