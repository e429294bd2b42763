/**
 * A valid invocation of each command, so that a generated case is wrong in exactly one way: the
 * baseline with one flag, argument or file spoiled. A command without a baseline is still fuzzed
 * (its required arguments get a placeholder), only less sharply; add one here when a command lands.
 */
import type { Sandbox } from '../../src/sandbox/types.js';
import type { ValueKind } from './values.js';

/** What a baseline can refer to: the sandbox and the folder of the user's input files. */
export interface FuzzContext {
  sandbox: Sandbox;
  /** Holds claim.json, variant.json, order.json, claims.csv, claims.jsonl. */
  inputs: string;
}

export interface Baseline {
  /** Positional arguments, in order. */
  args: (ctx: FuzzContext) => string[];
  /** Flags and their values. */
  flags: (ctx: FuzzContext) => string[];
  /** Whether the baseline itself may run in the baseline check (not long-running, no browser). */
  runs: boolean;
}

const VARIANT = ['--status', 'ACTIVE', '--name', 'Mug, blue', '--price', '12.5', '--inventory-quantity', '40', '--product-type', 'SIMPLE'];

const b = (args: Baseline['args'], flags: Baseline['flags'], runs = true): Baseline => ({ args, flags, runs });
const none = () => [];

export const BASELINES: Record<string, Baseline> = {
  'auth login': b(none, (c) => ['--client-credentials', '--store-id', c.sandbox.store.storeId]),
  'auth status': b(none, none),
  'auth token': b(none, none),
  'auth refresh': b(none, none),
  'auth logout': b(none, none),
  'orders list': b(none, () => ['--size', '5']),
  'orders update': b(
    () => ['ord_000001'],
    () => ['--source-order-number', '1001', '--currency', 'USD', '--total', '10.5'],
  ),
  'variants create': b(
    () => ['prod_fuzz'],
    () => VARIANT,
  ),
  'session verify': b((c) => [c.sandbox.mintSessionToken()], none),
  'claims file': b(none, (c) => ['--data', `${c.inputs}/claim.json`]),
  'claims template': b(none, none),
  'giftcard setup': b(none, (c) => ['--shop-url', c.sandbox.store.shopUrl]),
  'giftcard issue': b(none, (c) => {
    const customer = c.sandbox.customers[0];
    return ['--claim', 'C-fuzz', '--order', '1001', '--amount', '25.00', '--email', customer?.email ?? '', '--name', customer?.name ?? '', '--yes'];
  }),
  'giftcard history': b(none, none),
  'giftcard repair': b(none, () => ['--yes']),
  api: b(
    () => ['GET', '/v1/orders'],
    () => ['--query', 'size=2'],
  ),
  'config set': b(() => ['store-id', 'store_fuzz'], none),
  'config get': b(() => ['base-url'], none),
  'config unset': b(() => ['scopes'], none),
  'config list': b(none, none),
  'config path': b(none, none),
  'profiles list': b(none, none),
  'profiles use': b(() => ['default'], none),
  'profiles remove': b(
    () => ['spare'],
    () => ['--yes'],
  ),
  sandbox: b(none, () => ['--port', '0'], false),
  demo: b(none, none, false),
  completion: b(() => ['bash'], none),
};

/** Flags whose meaning differs by command (the rest are in FLAG_KINDS). */
export const COMMAND_FLAG_KINDS: Record<string, ValueKind> = {
  'orders update --tax': 'amount',
  // The spec describes the variant's tax as a unique id declared as a number: any sign.
  'variants create --tax': 'signed',
};

/** What each positional argument holds, by `command argName`. */
export const ARG_KINDS: Record<string, ValueKind> = {
  'orders update sourceOrderId': 'id',
  'variants create productId': 'id',
  'session verify token': 'session-token',
  'api method': 'http-method',
  'api path': 'api-path',
  'config set key': 'config-key',
  'config get key': 'config-key',
  'config unset key': 'config-key',
  'profiles use name': 'profile-name',
  'profiles remove name': 'profile-name',
  'completion shell': 'enum',
};

/** Words an error may use for an argument instead of its name (`Unknown setting "x"` names the key). */
export const ARG_ALIASES: Record<string, string[]> = {
  key: ['setting'],
  sourceOrderId: ['source order id'],
  productId: ['product id'],
  name: ['profile'],
  shell: ['shell'],
  token: ['session token'],
  method: ['method'],
  path: ['path'],
  journals: ['journal'],
};

/**
 * Generated cases a real server might accept, where opcli warns and sends instead of refusing (each
 * one a choice in docs/spec-choices.md): `command flag class`.
 */
export const WARN_ONLY = new Set(['variants create --product-image not-a-url']);
