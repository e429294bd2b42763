/**
 * undici's index, loaded on use (ARCHITECTURE.md, the HTTP core's fast path). Re-exported from
 * an ES module: bundled, `import('undici')` of the CommonJS package would give its `default` alone.
 */
export { ProxyAgent, request } from 'undici';
