/** One claim from flags, a JSON file or prompts: built, checked with the shared schema, then sent once. */
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { Deps } from '../deps.js';
import { isOutcomeUncertain, OpcliError, UsageError, ValidationError } from '../errors.js';
import { printJson } from '../output.js';
import type { FieldIssue } from '../schemas.js';
import { readStdinText } from '../stdin.js';
import { CLAIM_FIELDS, type ClaimField, coerceText, getPath, setPath } from './fields.js';
import { isStoreMismatch, storeMismatch } from './plan.js';
import { coerceObject } from './reader.js';
import { validateClaim } from './validate.js';

/** Raw flag values by field key: text, repeated text, or a boolean switch. */
export type FieldFlags = Record<string, string | string[] | boolean>;

export interface SingleOptions {
  fields: FieldFlags;
  data?: string;
  dryRun: boolean;
  json: boolean;
}

async function readData(data: string, deps: Deps): Promise<Record<string, unknown>> {
  let text: string;
  if (data === '-') text = await readStdinText(deps);
  else {
    try {
      text = readFileSync(resolvePath(deps.cwd, data), 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read --data ${data}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}.`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\ufeff/, ''));
  } catch (error) {
    throw new UsageError(`--data ${data} is not valid JSON: ${(error as Error).message}`, 'Pass one claim as a JSON object; `opcli claims template --json` prints one.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`--data ${data} must hold one claim (a JSON object).`, 'For many claims use `opcli claims file --from claims.jsonl`.');
  }
  return parsed as Record<string, unknown>;
}

/** Applies flag values over the claim; returns coercion problems by field path. */
export function applyFlags(claim: Record<string, unknown>, flags: FieldFlags): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of CLAIM_FIELDS) {
    const raw = flags[field.key];
    if (raw === undefined) continue;
    if (typeof raw === 'boolean') setPath(claim, field.path, raw);
    else if (Array.isArray(raw)) setPath(claim, field.path, raw.map((v) => v.trim()).filter(Boolean));
    else {
      const { value, issue } = coerceText(field, raw);
      if (issue) issues.push({ path: `--${field.flag}`, message: issue.message });
      // An empty flag value (--signature "") is kept as given.
      else setPath(claim, field.path, value ?? (field.acceptsEmpty ? '' : undefined));
    }
  }
  return issues;
}

/** Required fields still absent, in the schema's order. */
export function missingRequired(claim: unknown): ClaimField[] {
  return CLAIM_FIELDS.filter((f) => f.required && getPath(claim, f.path) === undefined);
}

function label(field: ClaimField): string {
  const hint = field.kind === 'number' ? ' (a number)' : field.key === 'warranty.warrantyPeriod' ? ' (ISO 8601 duration, e.g. P1Y)' : field.key === 'warranty.dateOfPurchase' ? ' (date-time, e.g. 2024-05-01T10:00:00Z)' : field.acceptsEmpty ? ' (a URL, or empty)' : '';
  return `${field.key}${hint}:`;
}

/** Asks for each missing field: a select list for enums, inline validation with the field's schema. */
async function ask(claim: Record<string, unknown>, missing: ClaimField[], deps: Deps): Promise<void> {
  const prompter = await deps.prompter();
  for (const field of missing) {
    if (field.kind === 'enum' && field.values) {
      const value = await prompter.select({ message: `${field.key}:`, choices: field.values.map((v) => ({ name: v, value: v })) });
      setPath(claim, field.path, value);
      continue;
    }
    const check = (text: string): true | string => {
      const { value, issue } = coerceText(field, text);
      if (issue) return issue.message;
      const parsed = field.schema.safeParse(value ?? (field.acceptsEmpty ? '' : undefined));
      return parsed.success ? true : (parsed.error.issues[0]?.message ?? 'invalid value');
    };
    const text = await prompter.input({ message: label(field), validate: check });
    const verdict = check(text);
    if (verdict !== true) throw new ValidationError(`Invalid value for ${field.key}: ${verdict}`, [{ path: field.key, message: verdict }]);
    setPath(claim, field.path, coerceText(field, text).value ?? '');
  }
}

/** Files one claim and prints its sourceOrderId (--json: the whole payload). */
export async function runSingle(opts: SingleOptions, deps: Deps): Promise<void> {
  const claim = opts.data ? await readData(opts.data, deps) : {};
  const readIssues = opts.data ? coerceObject(claim) : [];
  const flagIssues = applyFlags(claim, opts.fields);
  if (flagIssues.length) throw new ValidationError('Some flag values are not of the right type.', flagIssues);
  const tokenStore = await deps
    .profile()
    .then((p) => p.storeId)
    .catch(() => undefined);
  if (claim.storeId === undefined && tokenStore) claim.storeId = tokenStore;
  const missing = missingRequired(claim);
  if (missing.length) {
    if (!deps.canPrompt()) {
      throw new UsageError(
        `Missing required field${missing.length > 1 ? 's' : ''}: ${missing.map((f) => `--${f.flag}`).join(', ')}.`,
        'Pass them as flags, put them in --data claim.json, or run on a terminal without --no-input to be asked.',
      );
    }
    await ask(claim, missing, deps);
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
    throw new UsageError(`${storeMismatch(checked.claim.storeId, tokenStore)}; nothing was sent.`, 'Log in to that store (or pick its profile with --profile), or correct storeId.');
  }
  if (opts.dryRun) {
    const base = await deps
      .profile()
      .then((p) => p.baseUrl)
      .catch(() => undefined);
    const url = `${(base ?? '').replace(/\/+$/, '')}/v1/claims/offline`;
    if (opts.json) printJson(deps, { method: 'POST', url, body: checked.claim });
    else deps.out(`POST ${url}\ncontent-type: application/json\n\n${JSON.stringify(checked.claim, null, 2)}\n`);
    deps.err('Dry run: nothing was sent.\n');
    return;
  }
  const api = await deps.api();
  let created: Awaited<ReturnType<typeof api.createClaim>>;
  try {
    // No signal: once sent, the answer is awaited so the user learns whether the claim exists.
    created = await api.createClaim(checked.claim);
  } catch (error) {
    if (isStoreMismatch(error)) {
      throw new UsageError(`${storeMismatch(checked.claim.storeId, tokenStore)} (403); nothing was filed.`, 'Log in to that store (or pick its profile with --profile), or correct storeId.');
    }
    if (isOutcomeUncertain(error)) {
      throw new OpcliError(`The claim may or may not have been filed: ${(error as Error).message}`, {
        hint: 'opcli did not resend it (the API has no idempotency key). Check the store for the claim before filing it again.',
        cause: error,
      });
    }
    throw error;
  }
  if (opts.json) printJson(deps, created.payload);
  else {
    deps.out(`${created.payload.sourceOrderId}\n`);
    deps.err(`Filed the claim; order ${created.payload.sourceOrderId} was created for it.\n`);
  }
}
