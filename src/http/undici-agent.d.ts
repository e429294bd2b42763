/** undici's Agent module, loaded on its own by src/http/undici.ts (undici ships no types for it). */
declare module 'undici/lib/dispatcher/agent.js' {
  const Agent: typeof import('undici').Agent;
  export default Agent;
}
