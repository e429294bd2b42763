/**
 * Money as integer cents. Amounts enter as decimal strings and are parsed digit by digit, never
 * through floating point, so `0.1` and `0.2` add up to exactly `0.30`.
 */
import { ValidationError } from '../core/errors.js';

/** Largest amount accepted: well inside the range where cents / 100 prints exactly. */
const MAX_CENTS = 100_000_000_00;

/** Parses "25", "25.5" or "25.00" into cents; anything else (0, -5, 1.234, abc, 1e3) is refused. */
export function parseAmount(raw: string, field = 'amount'): number {
  const text = raw.trim();
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  const cents = m ? Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0')) : 0;
  let why: string | undefined;
  if (!m)
    why = /^-/.test(text)
      ? 'expected an amount above zero'
      : /^\d+\.\d{3,}$/.test(text)
        ? 'expected at most two decimal places'
        : 'expected a decimal amount such as 25.00';
  else if (cents <= 0) why = 'expected an amount above zero';
  else if (cents > MAX_CENTS) why = `expected at most ${formatCents(MAX_CENTS)}`;
  if (why) throw new ValidationError(`Invalid --${field} "${raw}": ${why}.`, [{ path: field, message: why }]);
  return cents;
}

/** Cents as a decimal string with two places: 2550 → "25.50". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Cents as the JSON number the provider expects (2550 → 25.5); exact for two-place amounts. */
export function centsToNumber(cents: number): number {
  return Number(formatCents(cents));
}

/** A provider balance (a JSON number in currency units) as cents, rounding away float noise. */
export function numberToCents(amount: number): number {
  return Math.round(amount * 100);
}

/** CHOICE (docs/spec-choices.md#provider-currency): the spec gives the provider's amounts no currency; a profile names it, else USD. */
export const DEFAULT_CURRENCY = 'USD';

/** Cents with their currency, grouped by thousands as people read money: 2500000, "USD" → "25,000.00 USD". */
export function formatMoney(cents: number, currency: string): string {
  return `${groupAmount(formatCents(cents))} ${currency}`;
}

/** A recorded amount ("25000.00") grouped by thousands (no ICU: see src/text/count.ts), or as it is when it is not one. */
export function groupAmount(amount: string): string {
  return /^-?\d+\.\d{2}$/.test(amount) ? amount.replace(/\B(?=(\d{3})+\.)/g, ',') : amount;
}

/** CHOICE (docs/spec-choices.md#amount-ceiling): the largest credit issued without --allow-large when a profile sets no max-amount: 1,000.00. */
export const DEFAULT_MAX_CENTS = 1000_00;
