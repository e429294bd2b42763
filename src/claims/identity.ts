/**
 * The key stage of a batch: what makes two rows the same claim. A row's identity is its parsed claim
 * in a form that survives what people and spreadsheets do to a file (reordering rows or columns,
 * re-quoting, CRLF, a BOM, `1.50` for `1.5`, `TRUE` for `true`, leading zeros or a `+` dropped from
 * digit strings, `1E5` for `100000`), hashed, plus its occurrence number among identical rows. The
 * line number is only for messages. With `--key COLUMN` the identity is the user's own id instead.
 */
import { hash } from 'node:crypto';
import { emailIdentity, idIdentity } from '../core/identity.js';
import { KeyTable } from '../record/key-table.js';

/** Digits only, perhaps with a leading `+` (a zip, an id, a phone number). */
const DIGITS = /^\+?\d+$/;
/** A plain decimal written as text. */
const DECIMAL_TEXT = /^([+-]?)(\d*)\.(\d*)$/;
/** Exponent notation a person may have typed (`1E5`); read by value when it is a whole number. */
const EXPONENT_TEXT = /^\d+(\.\d+)?e\+?\d+$/i;

/**
 * A text value in the form a spreadsheet round trip cannot change: trimmed, digit strings without
 * a leading `+` or zeros, decimals without padding zeros, whole numbers in exponent form by value.
 */
export function robustText(text: string): string {
  const t = text.trim();
  // Most text (names, e-mails, URLs) starts with a letter: none of the forms below can apply.
  const c = t.charCodeAt(0);
  if (!((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return t;
  // The forms below are written with digits, signs, points and exponents only: a date or an
  // address (`1 Main St`) stops at its first other character, without a regular expression.
  for (let i = 1; i < t.length; i++) {
    const d = t.charCodeAt(i);
    if (!((d >= 48 && d <= 57) || d === 43 || d === 45 || d === 46 || d === 69 || d === 101)) return t;
  }
  if (DIGITS.test(t)) return t.replace(/^\+/, '').replace(/^0+(?=\d)/, '');
  const d = DECIMAL_TEXT.exec(t);
  if (d && (d[2] || d[3])) {
    const whole = (d[2] ?? '').replace(/^0+(?=\d)/, '') || '0';
    const fraction = (d[3] ?? '').replace(/0+$/, '');
    const sign = d[1] === '-' && (whole !== '0' || fraction) ? '-' : '';
    return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
  }
  if (EXPONENT_TEXT.test(t)) {
    const n = Number(t);
    if (Number.isSafeInteger(n)) return String(n);
  }
  return t;
}

/**
 * CHOICE (docs/spec-choices.md#row-key): the claim as canonical text: keys sorted at every level, empty values (undefined, null, "", []
 * and objects left empty by that) dropped, strings in their robust form, numbers by value.
 */
export function robustJson(value: unknown): string {
  return canonical(value) ?? '';
}

/** An object's keys as they come, sorted, and each sorted key as JSON text with its colon. */
interface Shape {
  keys: string[];
  sorted: string[];
  names: string[];
}

/** The last key lists seen (by their first key) with their sorted order: a batch's rows share their objects' keys. */
const SHAPES = new Map<string, Shape>();

/** An object's keys, sorted; a sort (and its copy of the keys) only when this list of keys was not the last one seen. */
function shapeOf(value: object): Shape {
  const keys = Object.keys(value);
  const first = keys[0] ?? '';
  const known = SHAPES.get(first);
  if (known && sameList(known.keys, keys)) return known;
  const sorted = [...keys].sort();
  const shape = { keys, sorted, names: sorted.map((name) => `${JSON.stringify(name)}:`) };
  if (SHAPES.size < 256 || known) SHAPES.set(first, shape);
  return shape;
}

function sameList(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Text JSON.stringify writes as it is, between quotes: no quote, backslash, control character or surrogate. */
const JSON_PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function canonical(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const t = robustText(value);
    // JSON.stringify's text, without its call for most strings (this runs for every cell of every row).
    return t === '' ? undefined : JSON_PLAIN.test(t) ? `"${t}"` : JSON.stringify(t);
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'object') return JSON.stringify(value);
  // Built as one string, without an array of parts per object (this runs for every claim row).
  let out = '';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) out += `${i ? ',' : ''}${canonical(value[i]) ?? 'null'}`;
    return value.length ? `[${out}]` : undefined;
  }
  const { sorted, names } = shapeOf(value);
  for (let i = 0; i < sorted.length; i++) {
    const v = canonical((value as Record<string, unknown>)[sorted[i] as string]);
    if (v !== undefined) out = out === '' ? `{${names[i]}${v}` : `${out},${names[i]}${v}`;
  }
  return out === '' ? undefined : `${out}}`;
}

/** The first 128 bits of a SHA-256, as hex (crypto.hash: no Hash object per row). */
function hex128(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 32);
}

/** The hash of a row's robust content (128 bits, hex). */
export function contentHash(claim: unknown): string {
  return hashOfRobust(robustJson(claim));
}

/** The content hash of a claim already in its robust form (`robustJson`). */
export function hashOfRobust(robust: string): string {
  return hex128(`claim\u0000${robust}`);
}

/** The identity of a `--key` value (compared in its robust form). */
export function userKeyHash(value: string): string {
  return hex128(`key\u0000${robustText(value)}`);
}

/** The key of the `occurrence`-th row (1-based) with a given hash: the second identical row is a second claim. */
export function occurrenceKey(hash: string, occurrence: number): string {
  return occurrence === 1 ? hash : hex128(`${hash}#${occurrence}`);
}

/** A 32-bit tag of a content hash, kept in the journal index to tell "same key, other content". */
export function contentTag(hash: string): number {
  return Number.parseInt(hash.slice(0, 8), 16);
}

/**
 * CHOICE (docs/spec-choices.md#held-rows): the "looks like" fingerprint of a claim: the same customer e-mail and the same item (name and
 * sku), compared case-insensitively in robust form. Two rows with it in common and otherwise
 * different are held rather than filed when the earlier one was filed (or may have been).
 */
export function similarity(claim: unknown): string | undefined {
  const c = claim as { customer?: { email?: unknown }; item?: { name?: unknown; sku?: unknown } } | undefined;
  const email = typeof c?.customer?.email === 'string' ? robustText(c.customer.email).toLowerCase() : '';
  const name = typeof c?.item?.name === 'string' ? robustText(c.item.name).toLowerCase() : '';
  if (!email || !name) return undefined;
  const sku = typeof c?.item?.sku === 'string' ? robustText(c.item.sku).toLowerCase() : '';
  return hex128(`similar\u0000${email}\u0000${name}\u0000${sku}`).slice(0, 16);
}

/** Counts rows by hash (a key-table.ts table), remembering the line of the first: how many times a content (or a `--key` value) was seen. */
export class OccurrenceCounter {
  private readonly table = new KeyTable(1024, (n) => ({ count: new Uint32Array(n), first: new Uint32Array(n) }));

  /** Counts one more row with this hash; returns its occurrence (1-based) and the first one's line. */
  add(hash: string, line: number): { occurrence: number; firstLine: number } {
    const i = this.table.slot(hash);
    const c = this.table.columns;
    if (this.table.fresh) c.first[i] = line;
    c.count[i] = (c.count[i] as number) + 1;
    return { occurrence: c.count[i] as number, firstLine: c.first[i] as number };
  }
}

/**
 * CHOICE (docs/spec-choices.md#similar-claims): the fingerprint the record of claims holds a new
 * claim by when it is not the same content: the customer's e-mail by its identity (src/core/identity.ts)
 * and the item by its sku, else its sourceProductId. Undefined when the claim names neither.
 */
export function recordSimilarity(claim: unknown): string | undefined {
  const c = claim as { customer?: { email?: unknown }; item?: { sku?: unknown; sourceProductId?: unknown } } | undefined;
  const email = typeof c?.customer?.email === 'string' ? emailIdentity(c.customer.email) : '';
  const sku = typeof c?.item?.sku === 'string' ? idIdentity(robustText(c.item.sku)) : '';
  const product = typeof c?.item?.sourceProductId === 'string' ? idIdentity(robustText(c.item.sourceProductId)) : '';
  if (!email || !(sku || product)) return undefined;
  return hex128(`record-similar\u0000${email}\u0000${sku ? `sku:${sku}` : `product:${product}`}`).slice(0, 16);
}
