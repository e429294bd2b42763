import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { ApiError, OpcliError, UsageError } from '../../errors.js';
import { addFieldFlags, fieldKinds } from '../../orders/fields.js';
import { Order } from '../../schemas.js';

export interface UpdateOptions {
  sourceOrderId: string;
  /** A JSON file, or - for standard input; flags override its fields. */
  data?: string;
  /** Field values as the flags gave them (strings until validated). */
  flags: Record<string, unknown>;
  dryRun: boolean;
  json: boolean;
}

const KINDS = fieldKinds(Order);

/** Registers `orders update`. */
export function register(group: Command, deps: Deps): void {
  const cmd = group
    .command('update')
    .description('Update an order record (PUT /v1/orders/{sourceOrderId})')
    .argument('<sourceOrderId>', 'the order to update')
    .option('--data <file>', 'a JSON file with the order fields, or - to read standard input; flags override it');
  addFieldFlags(cmd, KINDS);
  cmd
    .option('--dry-run', 'print the request (method, path, body) and send nothing')
    .option('--json', 'print the answer as JSON')
    .addHelpText(
      'after',
      `
The body is the whole order: sourceOrderNumber and currency are required. Date-times are ISO 8601
with a time zone; --policy-cancelled-at null clears the cancellation.

Examples:
  $ opcli orders update ord_000001 --source-order-number '#1001' --currency USD --total 42.50
  $ opcli orders update ord_000001 --data order.json --policy-cancelled-at 2024-05-01T12:00:00Z
  $ jq '.currency = "EUR"' order.json | opcli orders update ord_000001 --data -
  $ opcli orders update ord_000001 --data order.json --dry-run`,
    )
    .action(async (sourceOrderId: string, flags: Record<string, unknown>) => {
      // `.` and `..` are refused where the path is built (pathSegment in src/api/service.ts).
      const { textProblem } = await import('../../text/flag-text.js');
      const problem = textProblem(sourceOrderId);
      if (problem) throw new UsageError(`The sourceOrderId argument ${problem}.`, 'Pass the id of the order, e.g. ord_000001.');
      const { data, dryRun, json, ...fields } = flags as { data?: string; dryRun?: boolean; json?: boolean } & Record<string, unknown>;
      await run({ sourceOrderId, data, flags: fields, dryRun: !!dryRun, json: !!json }, deps);
    });
}

/** Assembles, validates and sends (or, with --dry-run, prints) the order update. */
export async function run(opts: UpdateOptions, deps: Deps): Promise<void> {
  const { buildBody, printDryRun } = await import('../../orders/body.js');
  const order = await buildBody(deps, Order, KINDS, opts.data, opts.flags, 'order');
  const { PATHS } = await import('../../api/service.js');
  const path = PATHS.order(opts.sourceOrderId);
  if (opts.dryRun) {
    printDryRun(deps, 'PUT', path, order, opts.json);
    return;
  }
  const api = await deps.api();
  let answer: unknown;
  try {
    answer = await api.updateOrder(opts.sourceOrderId, order, deps.signal);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new OpcliError(`Order ${opts.sourceOrderId} not found: the store has no order with that id (404).`, {
        hint: 'Check the id with `opcli orders list` (the sourceOrderId column).',
        cause: error,
      });
    }
    throw error;
  }
  if (opts.json) {
    const { printJson } = await import('../../output.js');
    printJson(deps, answer);
  } else deps.err(`Order ${opts.sourceOrderId} updated.\n`);
}
