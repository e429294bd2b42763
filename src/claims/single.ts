/** One claim from flags, a JSON file or answers: built, checked, sent once. No prompt or print: the verb passes `ask` and renders. */
import { type HttpClient, neverLeft, serviceNotReached } from '../http/client.js';
import type { ResolvedProfile } from '../config/profile.js';
import { CHECK_ONE_CLAIM } from '../core/claim-check.js';
import { isOutcomeUncertain, OpcliError, UsageError, ValidationError } from '../core/errors.js';
import type { ClaimCreated, FieldIssue, OfflineClaim } from '../schemas.js';
import { type DataPorts, readDataObject } from '../input/data.js';
import { expectedValue, fieldMessage, missingMessage } from '../core/field-issues.js';
import { garbledText } from '../input/issues.js';
import { textProblem } from '../text/safe.js';
import { CLAIM_FIELDS, type ClaimField, coerceText, getPath, setPath, spreadsheetDamage } from './fields.js';
import { isStoreMismatch, storeMismatch, validateClaim } from './plan.js';
import { fileRecorded, singleSource } from './single-record.js';
import { createClaim, UnreachableError } from './pipeline.js';
import { PATHS } from '../api/service.js';

/** Raw flag values by field key: text, repeated text, or a boolean switch. */
export type FieldFlags = Record<string, string | string[] | boolean>;

interface SingleOptions {
  fields: FieldFlags;
  data?: string;
  dryRun: boolean;
  /** `--force`: file it even when the record of claims holds it (or a similar one). */
  force?: boolean;
  /** Asks the person to confirm the claim shown (given only on a terminal without --yes). */
  confirm?: (claim: OfflineClaim) => Promise<boolean>;
}

/** A question for a missing field: a choice among `choices` (an enum), else text checked by `validate`. */
type FieldQuestion = { message: string; choices: { name: string; value: string }[] } | { message: string; validate: (text: string) => true | string };

/** Asks the person at the terminal for a missing field (the verb puts the question); resolves to the answer. */
export type AskField = (question: FieldQuestion) => Promise<string>;

/** What filing one claim uses: --data's input, the active profile, the HTTP core (the claim's request), the record of claims' folder and the clock. */
interface SinglePorts extends DataPorts {
  profile(): Promise<ResolvedProfile>;
  http(): Promise<HttpClient>;
  configDir(): string;
  now(): number;
}

/** A dry run's request, or the claim the server filed. */
type SingleResult = { kind: 'dry-run'; url: string; body: unknown } | { kind: 'filed'; payload: ClaimCreated['payload'] };

const ONE_CLAIM = '{"customer":{"email":"…"},"item":{…}} (`opcli claims template --json` prints one)';

/** Reads --data: JSON has types, so no CSV-style coercion ("yes" is no boolean); garbled text and spreadsheet damage refused by field. */
async function readData(data: string, deps: DataPorts): Promise<{ claim: Record<string, unknown>; issues: FieldIssue[] }> {
  const claim = await readDataObject(deps, data, ONE_CLAIM);
  const mayBeEmpty = new Set(CLAIM_FIELDS.filter((f) => f.required && f.acceptsEmpty).map((f) => f.key));
  const issues = garbledText(claim, { refuseEmpty: true, mayBeEmpty });
  for (const field of CLAIM_FIELDS) {
    const value = getPath(claim, field.path);
    const damage = typeof value === 'string' ? spreadsheetDamage(field, value.trim()) : undefined;
    if (damage && !issues.some((i) => i.path === field.key)) issues.push({ path: field.key, message: damage });
  }
  return { claim, issues };
}

/** One text flag's value: refused when empty (but where the spec makes "" a value: signature), blank or garbled; then coerced to the field's type. */
function flagValue(field: ClaimField, raw: string): { value?: unknown; issue?: string } {
  if (raw === '' && field.required && field.acceptsEmpty) return { value: '' };
  // An empty required value reads as the batch's empty cell does: missing.
  if (raw.trim() === '' && field.required && !field.acceptsEmpty) return { issue: missingMessage(field) };
  const problem = textProblem(raw);
  if (problem) return { issue: problem };
  // A repeatable flag gives one item each time: it is not split or parsed like a CSV cell.
  if (field.type === 'array') return { value: raw.trim() };
  const { value, issue } = coerceText(field, raw);
  return issue ? { issue: issue.message } : { value };
}

/** Applies flag values over the claim; returns the flags whose values cannot be used. */
function applyFlags(claim: Record<string, unknown>, flags: FieldFlags): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of CLAIM_FIELDS) {
    const raw = flags[field.key];
    if (raw === undefined) continue;
    if (typeof raw === 'boolean') {
      setPath(claim, field.path, raw);
      continue;
    }
    const items = Array.isArray(raw) ? raw.map((item) => flagValue(field, item)) : [flagValue(field, raw)];
    const issue = items.find((item) => item.issue)?.issue;
    if (issue) issues.push({ path: `--${field.flag}`, message: issue });
    else setPath(claim, field.path, Array.isArray(raw) ? items.map((item) => item.value) : items[0]?.value);
  }
  return issues;
}

/** Required fields still absent, in the schema's order. */
function missingRequired(claim: unknown): ClaimField[] {
  return CLAIM_FIELDS.filter((f) => f.required && getPath(claim, f.path) === undefined);
}

/** `shippingAddress.zip` in words: "Shipping address zip". */
function words(field: ClaimField): string {
  const text = field.path.map((part) => part.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A prompt's question: the field in words and what it takes, as the batch's messages say it. */
function label(field: ClaimField): string {
  const what = field.acceptsEmpty
    ? 'an http:// or https:// URL, or empty'
    : field.format === 'datetime'
      ? 'a date such as 2024-05-01, or a date-time with its zone such as 2024-05-01T10:00:00Z'
      : expectedValue(field);
  return `${words(field)} (${what}):`;
}

/** What is wrong with an answer, in the batch's and the flags' words (src/core/field-issues.ts), or true. */
function checkAnswer(field: ClaimField, text: string): true | string {
  // The same text check as a flag's; a blank answer is missing, as a blank cell is.
  const problem = text.trim() === '' ? undefined : textProblem(text);
  if (problem) return `the answer ${problem}`;
  const { value, issue } = coerceText(field, text);
  if (issue) return issue.message;
  return fieldMessage(field, value ?? (field.acceptsEmpty ? '' : undefined)) ?? true;
}

/** Asks for each missing field: a select list for enums, inline validation with the field's schema. */
async function askMissing(claim: Record<string, unknown>, missing: ClaimField[], ask: AskField): Promise<void> {
  for (const field of missing) {
    if (field.type === 'enum' && field.values) {
      const value = await ask({ message: `${words(field)}:`, choices: field.values.map((v) => ({ name: v, value: v })) });
      setPath(claim, field.path, value);
      continue;
    }
    const check = (text: string) => checkAnswer(field, text);
    const text = await ask({ message: label(field), validate: check });
    const verdict = check(text);
    if (verdict !== true) throw new ValidationError(`Invalid value for ${field.key}: ${verdict}`, [{ path: field.key, message: verdict }]);
    setPath(claim, field.path, coerceText(field, text).value ?? '');
  }
}

/** Files one claim (or, with dryRun, only builds the request); `ask` is given only when someone can answer. */
export async function fileSingle(opts: SingleOptions, deps: SinglePorts, ask?: AskField): Promise<SingleResult> {
  const read = opts.data ? await readData(opts.data, deps) : { claim: {}, issues: [] };
  const claim = read.claim;
  // A flag replaces the --data value it names, and what was wrong with that value with it.
  const given = Object.keys(opts.fields);
  const readIssues = read.issues.filter((issue) => !given.some((key) => issue.path === key || issue.path.startsWith(`${key}.`)));
  const flagIssues = applyFlags(claim, opts.fields);
  if (flagIssues.length) throw new ValidationError('Some flag values cannot be used.', flagIssues, 'Nothing was sent. Correct the flags named above.');
  const profile = await deps.profile().catch(() => undefined);
  const tokenStore = profile?.storeId;
  if (claim.storeId === undefined && tokenStore) claim.storeId = tokenStore;
  const missing = missingRequired(claim);
  const asked = missing.length > 0;
  if (missing.length) {
    if (!ask) {
      throw new UsageError(
        `Missing required field${missing.length > 1 ? 's' : ''}: ${missing.map((f) => `--${f.flag}`).join(', ')}.`,
        'Pass them as flags, put them in --data claim.json, or run on a terminal without --no-input to be asked.',
      );
    }
    await askMissing(claim, missing, ask);
  }
  const checked = validateClaim(claim, readIssues);
  if (!checked.ok) {
    throw new ValidationError(
      `The claim is not valid: ${checked.issues.length} field${checked.issues.length > 1 ? 's' : ''} to fix.`,
      checked.issues,
      'Fix the fields named above; nothing was sent.',
    );
  }
  if (tokenStore && checked.claim.storeId !== tokenStore) {
    throw new UsageError(
      `${storeMismatch(checked.claim.storeId, tokenStore)}; nothing was sent.`,
      'Log in to that store (or pick its profile with --profile), or correct storeId.',
    );
  }
  if (opts.dryRun) return { kind: 'dry-run', url: `${(profile?.baseUrl ?? '').replace(/\/+$/, '')}${PATHS.claims}`, body: checked.claim };
  const http = await deps.http();
  const confirm = opts.confirm;
  let created: ClaimCreated['payload'];
  try {
    // No signal: once sent, the answer is awaited so the user learns whether the claim exists.
    created = await fileRecorded(
      checked.claim,
      profile,
      deps,
      { force: !!opts.force, source: singleSource(opts.data, asked, deps.cwd), confirm: confirm ? () => confirm(checked.claim) : undefined },
      async () => (await createClaim(http, checked.claim)).payload,
    );
  } catch (error) {
    if (isStoreMismatch(error)) {
      throw new UsageError(
        `${storeMismatch(checked.claim.storeId, tokenStore)} (403); nothing was filed.`,
        'Log in to that store (or pick its profile with --profile), or correct storeId.',
      );
    }
    const notReached = serviceNotReached(error);
    if (notReached) throw new UnreachableError('The claim was not filed', notReached);
    if (neverLeft(error)) {
      // Nothing left this machine (a refused connection, a proxy, an untrusted certificate): filing it again is safe.
      throw new OpcliError(`The claim was not filed: ${error.message}`, { hint: error.hint, cause: error });
    }
    if (isOutcomeUncertain(error)) {
      throw new OpcliError(`The claim may or may not have been filed: ${(error as Error).message}`, {
        hint: `opcli did not resend it (the API has no idempotency key). Before filing it again, ${CHECK_ONE_CLAIM}; filing it again while it exists files it twice.`,
        cause: error,
      });
    }
    throw error;
  }
  return { kind: 'filed', payload: created };
}
