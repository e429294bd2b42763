/**
 * `orders update` without erasing anything: endpoint 5 PUTs the whole order and the spec has no
 * single-order read, so the current record is found through the list and the given fields laid over
 * it (`--replace` sends exactly what was given). CHOICE (docs/spec-choices.md#order-update-merges):
 * no concurrency guard, so a change made between the read and the PUT is overwritten.
 */
import type { ServiceApi } from '../api/service.js';
import { ApiError, OpcliError, ValidationError } from '../core/errors.js';
import { ORDER_FIELDS, Order, type OrderRecord } from '../schemas.js';
import { fieldKinds } from '../input/flags.js';
import { validateBody } from '../input/issues.js';
import { fetchPage, type PagerEnv } from './pages.js';
import { counted } from '../text/count.js';

/** CHOICE (docs/spec-choices.md#page-size): the page size used while looking for the current record (the spec gives no maximum). */
export const FIND_PAGE_SIZE = 100;

export interface FindProgress {
  checked: number;
  pages: number;
  /** The store's totalCount, once a page said it. */
  total?: number;
}

/** Pages through GET /v1/orders until the record with `sourceOrderId` turns up; undefined when no page has it. */
export async function findOrder(
  deps: PagerEnv,
  sourceOrderId: string,
  options: { size?: number; onProgress?: (p: FindProgress) => void; onNotice?: (text: string) => void } = {},
): Promise<{ record?: OrderRecord; checked: number; pages: number }> {
  let cursor: string | undefined;
  let checked = 0;
  let pages = 0;
  for (;;) {
    const page = await fetchPage(deps, { size: options.size ?? FIND_PAGE_SIZE, cursor }, { records: false, onNotice: options.onNotice });
    pages++;
    const nodes = (page.edges ?? []).map((e) => e.node as Record<string, unknown>);
    const found = nodes.find((n) => n.sourceOrderId === sourceOrderId);
    checked += nodes.length;
    options.onProgress?.({ checked, pages, total: page.totalCount });
    if (found) return { record: found as OrderRecord, checked, pages };
    const next = page.pageInfo.endCursor;
    if (!page.pageInfo.hasNextPage || !next || nodes.length === 0 || next === cursor) return { checked, pages };
    cursor = next;
  }
}

const NULLABLE = new Set(
  fieldKinds(Order)
    .filter((k) => k.nullable)
    .map((k) => k.name),
);
const KNOWN = new Set<string>(ORDER_FIELDS);

/**
 * The part of a record that endpoint 5 accepts: Order fields with a value (null only where the
 * field may be null). `ignored` names the record's other fields, which the PUT body cannot carry.
 */
export function sendableFields(record: Record<string, unknown>): { fields: Record<string, unknown>; ignored: string[] } {
  const fields: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (key === 'sourceOrderId') continue;
    if (!KNOWN.has(key)) {
      ignored.push(key);
      continue;
    }
    if (value === undefined || (value === null && !NULLABLE.has(key))) continue;
    fields[key] = value;
  }
  return { fields, ignored };
}

export type ChangeKind = 'kept' | 'changed' | 'added' | 'cleared';

export interface FieldChange {
  field: string;
  change: ChangeKind;
  before?: unknown;
  after?: unknown;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Per field, in the spec's order: kept, changed, added (no value before) or cleared (a value before, none or null after). */
export function diffOrder(before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of ORDER_FIELDS as string[]) {
    const had = before[field] !== undefined && before[field] !== null;
    const has = after[field] !== undefined && after[field] !== null;
    if (!had && !has) {
      if (field in after) changes.push({ field, change: 'kept', before: before[field], after: after[field] });
      continue;
    }
    if (had && !has) changes.push({ field, change: 'cleared', before: before[field], after: after[field] });
    else if (!had) changes.push({ field, change: 'added', after: after[field] });
    else changes.push({ field, change: same(before[field], after[field]) ? 'kept' : 'changed', before: before[field], after: after[field] });
  }
  return changes;
}

export interface UpdatePlan {
  /** The body to PUT. */
  body: Order;
  /** Per-field changes against the current record (undefined when there is none to compare with). */
  diff?: FieldChange[];
  /** Fields of the current record that the PUT body cannot carry (not Order fields). */
  ignored: string[];
}

/**
 * Builds the body of an update from `given` (--data and the flags, not yet validated; `flagIssues`:
 * flag values that could not be converted): the whole body with `replace`, else laid over the current record.
 */
export async function planUpdate(
  deps: PagerEnv,
  input: {
    sourceOrderId: string;
    given: Record<string, unknown>;
    flagIssues: { path: string; message: string }[];
    replace: boolean;
    lookup: boolean;
    pageSize?: number;
    onProgress?: (p: FindProgress) => void;
    onNotice?: (text: string) => void;
  },
): Promise<UpdatePlan> {
  const find = () => findOrder(deps, input.sourceOrderId, { size: input.pageSize, onProgress: input.onProgress, onNotice: input.onNotice });
  if (input.replace) {
    const body = validateBody(Order, input.given, 'order', input.flagIssues);
    if (!input.lookup) return { body, ignored: [] };
    const found = await find();
    if (!found.record) return { body, ignored: [] };
    const { fields, ignored } = sendableFields(found.record);
    return { body, diff: diffOrder(fields, body), ignored };
  }
  // Refuse bad input before paging through the store.
  const given = validateBody(Order.partial(), input.given, 'order', input.flagIssues);
  const found = await find();
  if (!found.record) {
    throw new OpcliError(
      `Order ${input.sourceOrderId} not found: none of the ${found.checked} orders in ${counted(found.pages, 'page')} of the list has that sourceOrderId. Nothing was sent.`,
      {
        hint: 'Check the id with `opcli orders list --all` (ids are case-sensitive). An update keeps every field you do not give, so it needs the current record; --replace skips that lookup but ERASES every field you leave out, so use it only with the complete order (every field) in --data.',
      },
    );
  }
  const { fields, ignored } = sendableFields(found.record);
  // The stored values are sent back as they are, not judged as typed input (a stored refund total below 0 must not block an update).
  const body = { ...fields, ...given } as Order;
  const missing = (['sourceOrderNumber', 'currency'] as const).filter((k) => body[k] === undefined || body[k] === null);
  if (missing.length) {
    throw new ValidationError(
      `Invalid order (the current record with your changes): ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing from the stored record.`,
      missing.map((path) => ({ path, message: 'required by the API; give it with its flag' })),
      'Nothing was sent. Pass the missing fields with their flags.',
    );
  }
  return { body, diff: diffOrder(fields, body), ignored };
}

/** Sends the update (PUT); a 404 is told as the missing order it is. Returns the server's answer. */
export async function sendUpdate(deps: { api(): Promise<ServiceApi>; signal: AbortSignal }, sourceOrderId: string, body: Order): Promise<unknown> {
  const api = await deps.api();
  try {
    return await api.updateOrder(sourceOrderId, body, deps.signal);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new OpcliError(`Order ${sourceOrderId} not found: the store has no order with that id (404).`, {
        hint: 'Check the id with `opcli orders list` (the sourceOrderId column).',
        cause: error,
      });
    }
    throw error;
  }
}
