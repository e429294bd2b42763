/**
 * The Order fields, kept apart from the zod schemas so that a table or
 * a CSV header can name them without loading zod.
 */
import type { Order } from '../schemas.js';

/** The Order fields in the spec's order, for tables, flags and CSV headers (a test holds it equal to Order's keys). */
export const ORDER_FIELDS: readonly (keyof Order)[] = [
  'sourceOrderNumber',
  'currency',
  'policyCancelledAt',
  'originalSourceOrderId',
  'sourceCreatedAt',
  'sourceUpdatedAt',
  'sourceCancelledAt',
  'platformId',
  'premiumPaid',
  'total',
  'discountTotal',
  'shippingCost',
  'tax',
  'subtotal',
  'customerEmail',
  'customerName',
  'customerPhone',
  'shippingCostTax',
];
