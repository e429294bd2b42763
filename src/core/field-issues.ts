/** The one place zod's issues become messages a person can act on, worded the same for a batch row, a flag, a prompt and --data. */
import type { z } from 'zod';
import type { SchemaField } from '../input/schema.js';
import { excerpt, quoteInput } from '../text/excerpt.js';

export interface FieldIssue {
  /** Dotted field path such as `item.price` or `customer.email`; empty for the whole value. */
  path: string;
  message: string;
}

/** Turns a zod error into field issues with dotted paths; an unknown key is named in the path. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...path, key].join('.'), message: 'unknown field: the API does not accept it' }));
    }
    return [{ path: path.join('.'), message: issue.message }];
  });
}

/** Edit distance of two short strings, adjacent swaps counting once (optimal string alignment: defualt → default and UDS → USD are 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const prev = d[i - 1] as number[];
      row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** Codes used most, offered first among equally close suggestions. */
const COMMON = ['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'JPY', 'CHF', 'CNY', 'SEK', 'NZD', 'MXN', 'INR', 'BRL'];

/** The closest of `candidates` to `value` (at most `max`, distance at most 2), common ones first: what every "did you mean" offers. */
export function closest(value: string, candidates: readonly string[], max = 3): string[] {
  const upper = value.toUpperCase();
  const scored = candidates
    .map((c) => ({ c, d: editDistance(upper, c.toUpperCase()) }))
    .filter((x) => x.d <= Math.max(1, Math.min(2, Math.floor(value.length / 2))));
  const rank = (c: string) => {
    const i = COMMON.indexOf(c);
    return i < 0 ? COMMON.length : i;
  };
  scored.sort((x, y) => x.d - y.d || rank(x.c) - rank(y.c) || x.c.localeCompare(y.c));
  return scored.slice(0, max).map((x) => x.c);
}

function orList(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/** What a field's message needs to know of it (a SchemaField, a claim's field, a body's flag). */
export type MessageField = Pick<SchemaField, 'key' | 'type' | 'format' | 'values' | 'nullable' | 'schema'>;

/** The currency list: a long enum of three-letter codes. */
function isCurrency(field: MessageField): boolean {
  return field.type === 'enum' && (field.values?.length ?? 0) > 50 && (field.values ?? []).every((v) => /^[A-Z]{3}$/.test(v));
}

/** What a field takes, in words: "an e-mail address such as alice@example.com". */
export function expectedValue(field: MessageField): string {
  const orNull = field.nullable ? ' (or null)' : '';
  switch (field.type) {
    case 'number':
      return `a number${orNull}`;
    case 'integer':
      return `a whole number of 0 or more${orNull}`;
    case 'boolean':
      return `true or false${orNull}`;
    case 'array':
      return `a list${orNull}`;
    case 'enum':
      return isCurrency(field) ? `a three-letter currency code such as USD${orNull}` : `one of ${(field.values ?? []).join(', ')}${orNull}`;
    default:
      switch (field.format) {
        case 'datetime':
          return `an ISO 8601 date-time with a time zone, such as 2024-05-01T10:00:00Z${orNull}`;
        case 'email':
          return `an e-mail address such as alice@example.com${orNull}`;
        case 'url':
          return `an http:// or https:// URL${orNull}`;
        case 'duration':
          return `an ISO 8601 duration such as P1Y, P6M or P90D${orNull}`;
        default:
          return `a value${orNull}`;
      }
  }
}

/** The string formats worded by `expectedValue`; another (a regex) keeps its schema's own message. */
const FORMATS = new Set(['datetime', 'email', 'url', 'duration']);

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Why a year, month and day name no date that exists ("there is no month 13"), or undefined. */
export function missingDate(year: number, month: number, day: number, monthText = String(month)): string | undefined {
  if (month < 1 || month > 12) return `there is no month ${monthText}`;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return `${MONTHS[month - 1]} ${year} has ${days} days`;
  return undefined;
}

/** Why a date-time written in the right shape names a day that does not exist, or undefined. */
function impossibleDate(field: MessageField, text: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(T.*)$/.exec(text);
  if (!m) return undefined;
  // The shape is right when the same text with a real date passes.
  if (!field.schema.safeParse(`2000-01-01${m[4]}`).success) return undefined;
  const missing = missingDate(Number(m[1]), Number(m[2]), Number(m[3]), m[2]);
  return missing && `${quoteInput(text)} is not a date that exists: ${missing}`;
}

function explainEnum(field: MessageField, got: string): string {
  const values = field.values ?? [];
  if (isCurrency(field)) {
    // A lower-case code is one letter case away from the right one: offer just that.
    const near = values.includes(got.toUpperCase()) ? [got.toUpperCase()] : closest(got, values);
    return `${excerpt(got)} is not a currency the API accepts${near.length ? `; did you mean ${orList(near)}?` : " (expected a three-letter code from the spec's list, such as USD)"}`;
  }
  const near = closest(got, values, 1);
  return `expected one of ${values.join(', ')}, got ${quoteInput(got)}${near.length ? `; did you mean ${near[0]}?` : ''}`;
}

/** A field of a request body: what its message needs, whether it may be left out, and its flag. */
export type BodyField = MessageField & { optional: boolean; flag: string };

/** A request body's zod issues as messages; `kinds` are the body's fields by name, each with the flag that sets it. */
export function bodyIssues(error: z.ZodError, value: Record<string, unknown>, kinds: ReadonlyMap<string, BodyField>): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    const path = fieldIssues({ issues: [issue] } as z.ZodError)[0]?.path ?? '';
    const name = String(issue.path[0] ?? '');
    const kind = kinds.get(name);
    const got = name ? value[name] : undefined;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const near = closest(key, [...kinds.keys()], 1);
        out.push({ path: excerpt(key, 60), message: `unknown field ${quoteInput(key, 60)}${near.length ? `; did you mean ${near[0]}?` : ''}` });
      }
    } else if (kind && issue.path.length === 1 && got === undefined && !kind.optional) {
      out.push({ path, message: `${missingMessage(kind)}; pass --${kind.flag}` });
    } else if (kind && issue.path.length === 1) {
      out.push({ path, message: fieldMessage(kind, got) ?? issue.message });
    } else {
      out.push({ path, message: issue.message });
    }
  }
  return out;
}

/** The message for a missing value of a required field. */
export function missingMessage(field: MessageField): string {
  return `missing (required: ${expectedValue(field)})`;
}

/** The one message for a value its field's schema refuses (undefined when it accepts it): what is wrong and what is expected. */
export function fieldMessage(field: MessageField, value: unknown): string | undefined {
  if (value === undefined || (value === '' && field.type !== 'string') || (value === '' && !field.schema.safeParse('').success)) {
    return field.schema.safeParse(value).success ? undefined : missingMessage(field);
  }
  if (value === null && field.nullable) return undefined;
  const parsed = field.schema.safeParse(value);
  if (parsed.success) return undefined;
  const got = typeof value === 'string' ? quoteInput(value) : excerpt(JSON.stringify(value) ?? String(value));
  if (field.type === 'enum' && typeof value === 'string') return explainEnum(field, value);
  if (field.type === 'string' && typeof value === 'string' && FORMATS.has(field.format ?? '')) {
    if (field.format === 'datetime') {
      const impossible = impossibleDate(field, value);
      if (impossible) return impossible;
    }
    return `expected ${expectedValue(field)}, got ${got}`;
  }
  const first = parsed.error.issues[0];
  const wrongType = first?.code === 'invalid_type' && first.path.length === 0;
  if (wrongType || (field.type === 'integer' && typeof value === 'number')) return `expected ${expectedValue(field)}, got ${got}`;
  if (field.type === 'array' && Array.isArray(value) && first && typeof first.path[0] === 'number') {
    return `item ${first.path[0] + 1} (${excerpt(JSON.stringify(value[first.path[0]]) ?? '')}): ${first.message}`;
  }
  if (first?.code === 'invalid_format' && FORMATS.has(first.format)) {
    // A union such as a signature: a URL, or the empty string.
    const orEmpty = field.schema.safeParse('').success ? ', or an empty string' : '';
    return `expected ${expectedValue({ ...field, format: first.format })}${orEmpty}, got ${got}`;
  }
  // A rule of the schema's own (a price of 0 or more, a signature URL or ""): its words, and the value.
  return `${first?.message ?? `expected ${expectedValue(field)}`}, got ${got}`;
}
