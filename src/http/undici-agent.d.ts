/** undici's Agent module, loaded on its own by src/http/undici.ts (undici ships no types for it). */
declare module 'undici/lib/dispatcher/agent.js' {
  const Agent: typeof import('undici').Agent;
  export default Agent;
}

/** undici's ProxyAgent module, loaded on its own (src/http/proxy-agent.ts) when a request goes through a proxy. */
declare module 'undici/lib/dispatcher/proxy-agent.js' {
  const ProxyAgent: typeof import('undici').ProxyAgent;
  export default ProxyAgent;
}

/** undici's Dispatcher base class, whose prototype undici's index gives its API methods. */
declare module 'undici/lib/dispatcher/dispatcher.js' {
  const Dispatcher: { prototype: { connect?: unknown } };
  export default Dispatcher;
}

/** undici's `connect` API method (a CONNECT request), which ProxyAgent calls on its proxy client. */
declare module 'undici/lib/api/api-connect.js' {
  const connect: unknown;
  export default connect;
}
