/** The admin HTTP API under /__admin: for the holder of the run's admin secret (src/sandbox/guard.ts checks it), never recorded, never faulted. */
import * as z from 'zod';
import { FaultRuleSchema } from './faults.js';
import type { Ctx, Reply } from './http.js';
import { json, validate } from './http.js';
import { RateLimitSchema } from './rate-limit.js';
import { PROVIDER_ERROR_SHAPES, type Sandbox, UNKNOWN_CUSTOMER_ANSWERS } from './types.js';

const ConfigureBody = z.strictObject({
  accessTokenTtl: z.number().positive().optional(),
  triggerDelayMs: z.number().nonnegative().nullable().optional(),
  autoApprove: z.boolean().optional(),
  providerErrorShape: z.enum(PROVIDER_ERROR_SHAPES).optional(),
  unknownCustomer: z.enum(UNKNOWN_CUSTOMER_ANSWERS).optional(),
  /** null removes the limit. */
  rateLimit: RateLimitSchema.nullable().optional(),
  latencyMs: z.number().nonnegative().max(60_000).optional(),
});

const SessionTokenBody = z.strictObject({ expiresInSeconds: z.number().optional() });

const TokensBody = z.strictObject({
  scopes: z.array(z.string()).optional(),
  accessTokenTtl: z.number().positive().optional(),
});

/** An empty body is `{}`; else JSON checked with `schema`: the data, or the 400 to answer. */
function readAdminBody<T extends z.ZodType>(ctx: Ctx, schema: T, what: string): { ok: true; data: z.output<T> } | { ok: false; reply: Reply } {
  let value: unknown = {};
  try {
    if (ctx.body.trim() !== '') value = JSON.parse(ctx.body);
  } catch {
    return { ok: false, reply: json(400, { error: 'invalid_request', message: 'the body is not valid JSON' }) };
  }
  return validate(schema, value, what);
}

export function handleAdmin(sandbox: Sandbox, ctx: Ctx): Reply {
  const route = `${ctx.method} ${ctx.path.replace(/\/+$/, '')}`;
  switch (route) {
    case 'GET /__admin/requests': {
      const prefix = ctx.query.path;
      return json(200, prefix ? sandbox.requests.filter((r) => r.path.startsWith(prefix)) : sandbox.requests);
    }
    case 'GET /__admin/counters':
      return json(200, sandbox.counters);
    case 'GET /__admin/state':
      return json(200, {
        url: sandbox.url,
        authorizeUrl: sandbox.authorizeUrl,
        providerUrl: sandbox.providerUrl,
        triggerUrl: sandbox.triggerUrl,
        nativeUrl: sandbox.nativeUrl,
        providerName: sandbox.providerName,
        client: sandbox.client,
        store: sandbox.store,
        otherStoreId: sandbox.otherStoreId,
        customers: sandbox.customers,
        fixtures: sandbox.fixtures,
      });
    case 'GET /__admin/gift-cards':
      return json(200, sandbox.giftCards);
    case 'GET /__admin/claims':
      return json(200, sandbox.claims);
    case 'GET /__admin/variants':
      return json(200, sandbox.variants);
    case 'PUT /__admin/faults': {
      const rules = readAdminBody(ctx, z.array(FaultRuleSchema), 'fault rules');
      if (!rules.ok) return rules.reply;
      sandbox.setFaults(rules.data);
      return json(200, { status: 'ok', faults: rules.data.length });
    }
    case 'POST /__admin/session-tokens': {
      const options = readAdminBody(ctx, SessionTokenBody, 'session token options');
      if (!options.ok) return options.reply;
      return json(200, { session_token: sandbox.mintSessionToken(options.data) });
    }
    case 'POST /__admin/tokens': {
      const options = readAdminBody(ctx, TokensBody, 'token options');
      if (!options.ok) return options.reply;
      return json(200, sandbox.issueTokens(options.data));
    }
    case 'POST /__admin/configure': {
      const settings = readAdminBody(ctx, ConfigureBody, 'settings');
      if (!settings.ok) return settings.reply;
      sandbox.configure(settings.data);
      return json(200, { status: 'ok' });
    }
    case 'POST /__admin/reset-log':
      sandbox.resetLog();
      return json(200, { status: 'ok' });
    default:
      return json(404, { error: 'not_found', message: `no admin route ${ctx.method} ${ctx.path}` });
  }
}
