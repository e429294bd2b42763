import type { Sandbox } from '../../src/sandbox/types.js';

/** The GET /v1/orders requests the sandbox received. */
export const orderGets = (sandbox: Sandbox) => sandbox.requests.filter((r) => r.method === 'GET' && r.path === '/v1/orders');

/** The order ids of `--jsonl` output, in order. */
export const jsonlIds = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).sourceOrderId as string);
