/** The columns of an order list: which exist, which a terminal shows by default, and a cell's text. */
import { ORDER_FIELD_NAMES as ORDER_FIELDS } from '../../order-fields.js';
import type { OrderRecord } from '../../schemas.js';

/** Every column of the list: sourceOrderId, then the spec's Order fields in its order. */
export const ORDER_COLUMNS = ['sourceOrderId', ...ORDER_FIELDS] as string[];

/**
 * CHOICE (docs/spec-choices.md#default-columns): the columns a terminal table shows by default; with
 * their headers and typical values they fit 80 columns. `--columns` picks others, `--json` has the full record.
 */
export const DEFAULT_ORDER_COLUMNS = ['sourceOrderId', 'sourceOrderNumber', 'currency', 'total', 'customerName'];

/** The columns a record set carries: sourceOrderId, then the spec's Order fields in its order. */
export function presentColumns(orders: OrderRecord[]): string[] {
  return ORDER_COLUMNS.filter((k) => orders.some((o) => (o as Record<string, unknown>)[k] !== undefined));
}

/** A field's text in a tab-separated line: empty when absent, JSON for an object. */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The money columns: right-aligned with two decimals on a terminal, never cut. */
export const MONEY_COLUMNS: readonly string[] = ['premiumPaid', 'total', 'discountTotal', 'shippingCost', 'tax', 'subtotal', 'shippingCostTax'];

/** The columns a terminal table never cuts nor leaves out before others: money, its currency and ids (a cut id or amount reads as another one). */
export const WHOLE_COLUMNS: readonly string[] = [...MONEY_COLUMNS, 'currency', 'sourceOrderId', 'sourceOrderNumber', 'originalSourceOrderId', 'platformId'];

/** An amount as a table shows it: two decimals (45.50); more precise values as they came, never rounded. */
export function amountText(value: unknown): unknown {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value;
  const fixed = value.toFixed(2);
  return Number(fixed) === value ? fixed : String(value);
}
