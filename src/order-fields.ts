/**
 * The Order fields in the spec's order, for tables, flags and CSV headers, without zod: the start-up
 * fast path (ARCHITECTURE.md; test/orders/output-loads.test.ts) lists orders without loading it.
 * src/schemas.ts exports them as ORDER_FIELDS, typed as Order's keys (a test holds the two equal).
 */
export const ORDER_FIELD_NAMES = [
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
] as const;
