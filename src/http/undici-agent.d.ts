/** undici's Agent module, imported alone by src/http/client.ts (undici ships no types for it). */
declare module 'undici/lib/dispatcher/agent.js' {
  const Agent: typeof import('undici').Agent;
  export default Agent;
}
