/** The leaf fields of an offline claim, derived from `schemas.OfflineClaim` (never hand-listed), and text (cells, flags) coerced into them. */
import { type FieldIssue, missingDate } from '../core/field-issues.js';
import { DECIMAL_RE, decimalPrecisionProblem } from '../core/flags.js';
import { kebab, type SchemaField, schemaFields } from '../input/schema.js';
import { OfflineClaim } from '../schemas.js';
import { quoteInput } from '../text/excerpt.js';

export interface ClaimField extends SchemaField {
  /** The field and every object above it are required. */
  required: boolean;
  /** The empty string is a valid value (signature): an empty cell is sent as "" when required. */
  acceptsEmpty: boolean;
  /** The `claims file` flag, without dashes: `customer-email`, `item-image`, `from-valet`. */
  flag: string;
}

/** Flag prefixes per top-level object; `options.*` flags carry none (`--from-valet`). */
const PREFIX: Record<string, string> = { customer: 'customer', item: 'item', warranty: 'warranty', shippingAddress: 'shipping', options: '' };

/** Flag names that read better than the derived ones (the issue names them so). */
const FLAG_NAMES: Record<string, string> = {
  'customer.phoneNumber': 'customer-phone',
  'item.images': 'item-image',
  'warranty.receiptImages': 'warranty-receipt-image',
  'warranty.warrantyPeriod': 'warranty-period',
};

function flagFor(path: string[]): string {
  const key = path.join('.');
  if (FLAG_NAMES[key]) return FLAG_NAMES[key];
  if (path.length === 1) return kebab(path[0] as string);
  const prefix = PREFIX[path[0] as string] ?? kebab(path[0] as string);
  const rest = path.slice(1).map(kebab).join('-');
  return prefix ? `${prefix}-${rest}` : rest;
}

/** Every leaf field of an offline claim (`item.price`, the CSV column names), in the schema's order. */
export const CLAIM_FIELDS: readonly ClaimField[] = schemaFields(OfflineClaim, { nested: true }).map((field) => ({
  ...field,
  required: !field.optional,
  acceptsEmpty: field.schema.safeParse('').success,
  flag: flagFor(field.path),
}));

export const FIELD_BY_KEY: ReadonlyMap<string, ClaimField> = new Map(CLAIM_FIELDS.map((f) => [f.key, f]));

/** Sets a value at a path, creating the objects above it. */
export function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  // By index, not over a slice of the path: this runs for every cell of every row.
  for (let i = 0; i < path.length - 1; i++) {
    const part = path[i] as string;
    const next = node[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

export function getPath(source: unknown, path: string[]): unknown {
  let node = source;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** Scientific notation a spreadsheet wrote (`1.23456789012346E+19`): the digits past the 15th are gone, so two ids may read the same. */
const SCIENTIFIC = /^[+-]?\d(\.\d+)?e[+-]\d+$/i;
/** A date a spreadsheet made of a code (`SEP-12` became `09/12/26`, `2/1` became `02/01/26`). */
const SPREADSHEET_DATE = /^(\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}-\d{2}-\d{2}|\d{1,2}-[a-z]{3}(-\d{2,4})?)$/i;
/** Columns that hold codes and ids, never dates. */
const CODE_FIELD = /(sku|Id|zip|Abr)$/;
const AS_TEXT =
  'the original value is lost; export the file again from its source, or import the CSV with every column as text (see `opcli claims template --help`)';

/** CHOICE (docs/spec-choices.md#spreadsheet-damage): a cell a spreadsheet visibly damaged (its value is lost): refused. */
export function spreadsheetDamage(field: Pick<SchemaField, 'key' | 'type'>, text: string): string | undefined {
  if (field.type !== 'string') return undefined;
  // U+FFFD is what bytes that were not UTF-8 decode to (a file saved as Latin-1 or Windows-1252):
  // the customer's real text is gone from this reading.
  if (text.includes('\uFFFD')) return 'holds U+FFFD, the mark of bytes that were not UTF-8: save the file as UTF-8 (CSV UTF-8) and run again';
  // Both forms begin with a digit or a sign: most text (names, e-mails) is done without a regular expression (this runs for every cell).
  const c = text.charCodeAt(0);
  const digit = c >= 48 && c <= 57;
  if (!digit && c !== 43 && c !== 45) return undefined;
  if (SCIENTIFIC.test(text)) return `${quoteInput(text)} looks like a number a spreadsheet turned into scientific notation: ${AS_TEXT}`;
  if (digit && CODE_FIELD.test(field.key) && SPREADSHEET_DATE.test(text))
    return `${quoteInput(text)} looks like a date a spreadsheet made of a code: ${AS_TEXT}`;
  return undefined;
}

/** Each enum field's values by their lower case (built once per field: a batch reads thousands of cells). */
const ENUM_BY_LOWER = new WeakMap<ClaimField, Map<string, string>>();

/** The enum value `text` names, in any case (as written when it names none). */
function enumValue(field: ClaimField, text: string): string {
  const values = field.values ?? [];
  if (values.includes(text)) return text;
  let byLower = ENUM_BY_LOWER.get(field);
  if (!byLower) {
    byLower = new Map();
    // The first value wins, as a search in order would find it.
    for (const v of values) if (!byLower.has(v.toLowerCase())) byLower.set(v.toLowerCase(), v);
    ENUM_BY_LOWER.set(field, byLower);
  }
  return byLower.get(text.toLowerCase()) ?? text;
}

/** A date without a time, as a spreadsheet writes a date cell: `2024-05-01`. */
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A date of numbers whose day and month only the writer's locale orders: `05/01/2024`, `1.5.24`, `05-01-2024 10:00`. */
const DAY_MONTH = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})(?=$|[ T])/;

/** CHOICE (docs/spec-choices.md#dates-without-a-time): a date alone is sent as noon UTC, the same day from UTC-11 to UTC+11. */
const DATE_ONLY_TIME = 'T12:00:00Z';

/** A date-time field's date as spreadsheets write it: a date alone made a date-time, a day-month form refused; undefined for any other text. */
function spreadsheetDate(field: Pick<SchemaField, 'format'>, text: string): { value?: string; issue?: string } | undefined {
  if (field.format !== 'datetime') return undefined;
  const date = DATE_ONLY.exec(text);
  if (date) {
    const missing = missingDate(Number(date[1]), Number(date[2]), Number(date[3]), date[2]);
    return missing ? { issue: `${quoteInput(text)} is not a date that exists: ${missing}` } : { value: `${text}${DATE_ONLY_TIME}` };
  }
  const dm = DAY_MONTH.exec(text);
  if (!dm) {
    // A date-time's shape (its day, its time and zone) is the schema's to check; anything else is told both forms.
    if (/^\d{4}-\d{2}-\d{2}T/.test(text)) return undefined;
    return { issue: `expected a date such as 2024-05-01, or an ISO 8601 date-time with a time zone such as 2024-05-01T10:00:00Z, got ${quoteInput(text)}` };
  }
  const [a, b] = [Number(dm[1]), Number(dm[2])];
  const year = (dm[3] as string).length === 2 ? `20${dm[3]}` : (dm[3] as string);
  const iso = (month: number, day: number) => `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  const readings = [
    !missingDate(Number(year), b, a) && `${iso(b, a)} (day ${a}, month ${b})`,
    a !== b && !missingDate(Number(year), a, b) && `${iso(a, b)} (month ${a}, day ${b})`,
  ].filter(Boolean);
  return {
    issue: `${quoteInput(text)} does not say which number is the day and which the month: write the date as year-month-day${readings.length ? `, such as ${readings.join(' or ')}` : ' (2024-05-01)'}`,
  };
}

const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

/** A decimal written with a comma for its point, as a European spreadsheet writes it: `249,99`. */
const DECIMAL_COMMA = /^[+-]?(\d+,\d*|,\d+)$/;

/** How the text of a file is read: `decimalComma` in a file whose separator is the semicolon (European spreadsheets). */
interface TextOptions {
  decimalComma?: boolean;
}

/** A text value (a CSV cell, a flag) in the field's type: no value for an empty cell left out, an issue for text of another kind. */
export function coerceText(field: ClaimField, text: string, options: TextOptions = {}): { value?: unknown; issue?: FieldIssue } {
  let trimmed = text.trim();
  if (trimmed === '') return field.required && field.acceptsEmpty ? { value: '' } : {};
  switch (field.type) {
    case 'number': {
      if (options.decimalComma && DECIMAL_COMMA.test(trimmed)) trimmed = trimmed.replace(',', '.');
      const n = Number(trimmed);
      if (!DECIMAL_RE.test(trimmed) || !Number.isFinite(n)) {
        const full = /^[+-]?(\d+(\.\d*)?|\.\d+)e[+-]?\d+$/i.test(trimmed) && Number.isFinite(n) ? `; write it out in full (${n})` : '';
        const comma = options.decimalComma ? ' or 49,99, with no thousands separator' : '';
        return { issue: { path: field.key, message: `expected a number, got ${quoteInput(trimmed)} (decimal notation, such as 49.99${comma}${full})` } };
      }
      const precision = decimalPrecisionProblem(trimmed);
      if (precision) return { issue: { path: field.key, message: `${quoteInput(trimmed)} ${precision}: give it to the precision you mean` } };
      return { value: n };
    }
    case 'boolean': {
      const lower = trimmed.toLowerCase();
      if (TRUE.has(lower)) return { value: true };
      if (FALSE.has(lower)) return { value: false };
      return { issue: { path: field.key, message: `expected true or false, got ${quoteInput(trimmed)}` } };
    }
    case 'array': {
      if (trimmed.startsWith('[')) {
        try {
          const parsed: unknown = JSON.parse(trimmed);
          if (Array.isArray(parsed)) return { value: parsed };
        } catch {
          // fall through to the issue below
        }
        return { issue: { path: field.key, message: 'expected a JSON array of URLs or URLs separated by ";"' } };
      }
      return {
        value: trimmed
          .split(';')
          .map((s) => s.trim())
          .filter(Boolean),
      };
    }
    case 'enum':
      // Case-insensitive for people typing in a spreadsheet; the schema checks the value.
      return { value: enumValue(field, trimmed) };
    default: {
      const date = spreadsheetDate(field, trimmed);
      if (date) return date.issue ? { issue: { path: field.key, message: date.issue } } : { value: date.value };
      const damage = spreadsheetDamage(field, trimmed);
      if (damage) return { issue: { path: field.key, message: damage } };
      // Spreadsheets leave stray spaces around values; none of the claim's strings needs them.
      return { value: trimmed };
    }
  }
}

/** Flattens a claim object into cells keyed by field path (arrays joined with ";"), for CSV output. */
export function flattenClaim(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of CLAIM_FIELDS) {
    const v = getPath(value, field.path);
    if (v === undefined || v === null) continue;
    out[field.key] = Array.isArray(v) ? v.join(';') : String(v);
  }
  return out;
}
