import { join } from 'node:path';
import type Conf from 'conf';
import type { z } from 'zod';
import { ExitCode, OpcliError } from '../core/errors.js';
import { fieldIssues } from '../core/field-issues.js';
import { shellAdvice } from '../core/platform.js';
import { assertPrivateFile, ensurePrivateDir, MAX_CONFIG_BYTES, readPrivateFile } from './private-file.js';

/** A settings or credentials file that cannot be used as it is: exit 2, never overwritten. */
export class DamagedFileError extends OpcliError {
  constructor(path: string, what: string, problem: string, cause?: unknown) {
    super(`The ${what} file ${path} is damaged: ${problem}.`, {
      exitCode: ExitCode.usage,
      hint: `opcli does not overwrite it. Restore it from a backup or fix it by hand, or move it aside to start afresh: \`${shellAdvice().moveAside(path)}\`.`,
      details: { path },
      cause,
    });
  }
}

/** A check compiled from the schema (src/core/schema-checks.ts): true only when the schema certainly returns the value unchanged. */
export type QuickCheck = (raw: unknown) => boolean;

/** The quick check could not vouch for a file and its schema is not loaded yet (see ConfFileStore). */
class SchemaNeeded extends Error {}

/**
 * Parses a file's text and checks it against `schema` (after `quick`); anything else is a
 * DamagedFileError. Without the schema, a file the quick check cannot vouch for throws SchemaNeeded.
 */
function parseChecked<T>(text: string, schema: z.ZodType<T> | undefined, path: string, what: string, quick?: QuickCheck): T {
  // A file of nothing but spaces, or of zero bytes, is one whose write was cut short (a full disk, a
  // crash): reading it as empty would forget every profile and login without a word.
  if (text.trim() === '') throw new DamagedFileError(path, what, 'it is empty (a write may have been cut short, e.g. by a full disk)');
  if (text.includes('\uFFFD')) throw new DamagedFileError(path, what, 'it is not UTF-8 text');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new DamagedFileError(path, what, `it is not valid JSON (${(error as Error).message})`, error);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    const kind = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`;
    throw new DamagedFileError(path, what, `it holds ${kind} where an object ({ "profiles": … }) was expected`);
  }
  if (quick?.(raw)) return raw as T;
  if (!schema) throw new SchemaNeeded();
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = fieldIssues(parsed.error)[0];
  throw new DamagedFileError(path, what, `${issue?.path || '(top level)'}: ${issue?.message ?? 'invalid'}`);
}

/**
 * One JSON file of the config folder (settings.json, credentials.json). Reads are opcli's own: the
 * file is opened without following a link and checked with the private-file rules (a regular file
 * you own that others cannot write, in a folder only you can write), its text is read from that
 * same descriptor and checked against the zod schema (after a quick check compiled from it at
 * build time, src/core/schema-checks.ts, that passes only what the schema certainly returns unchanged;
 * the schema, and zod with it, is loaded only for a write or a file the quick check cannot vouch
 * for), so a file that is not JSON, not an object or not the schema is a DamagedFileError naming
 * it. Writes are conf's: atomic (a temporary file
 * renamed over the old one), mode 0600; conf never clears an invalid file (`clearInvalidConfig:
 * false`) and every write reads first, so a damaged file is never replaced. conf is loaded only by a
 * store that may write (`open(..., { write: true })`, or `prepareWrite()`): a one-off command that
 * only reads its profile and token never pays for it. Keys are not dotted paths (profile names may
 * hold dots) and nothing is watched.
 *
 * Why the check before conf's write is enough, although conf then opens the path itself (following
 * links): the checks refuse any folder that another user owns or can write into, so between the
 * check and conf's write only the user (or root) could swap the file for a link, and they can read
 * their own secrets anyway. Nobody else can win that race.
 */
export class ConfFileStore<T extends Record<string, unknown>> {
  private conf: Conf<T> | undefined;
  /** The zod schema, once loaded: by a write, or by a read the quick check could not vouch for. */
  private schema: z.ZodType<T> | undefined;

  private constructor(
    readonly path: string,
    private readonly dir: string,
    private readonly name: string,
    private readonly loadSchema: () => Promise<z.ZodType<T>>,
    private readonly what: string,
    private readonly quick: QuickCheck | undefined,
    private readonly empty: () => T,
  ) {}

  /**
   * Opens `<dir>/<name>.json` (without creating it); a damaged or unsafe file throws here. With
   * `write`, conf is loaded too, so `write` can be called at once.
   */
  static async open<T extends Record<string, unknown>>(
    dir: string,
    name: string,
    schema: () => Promise<z.ZodType<T>>,
    what: string,
    options: { write?: boolean; quick?: QuickCheck; empty: () => T },
  ): Promise<ConfFileStore<T>> {
    ensurePrivateDir(dir);
    const store = new ConfFileStore(join(dir, `${name}.json`), dir, name, schema, what, options.quick, options.empty);
    if (options.write) await store.prepareWrite();
    else {
      try {
        store.readChecked();
      } catch (error) {
        if (!(error instanceof SchemaNeeded)) throw error;
        // A file opcli did not write as it is (edited by hand, an older version): zod decides.
        store.schema ??= await schema();
        store.readChecked();
      }
    }
    return store;
  }

  /** Loads the writer (conf) and the schema; conf reads and checks the file in its constructor. */
  async prepareWrite(): Promise<void> {
    this.schema ??= await this.loadSchema();
    if (this.conf) return;
    assertPrivateFile(this.path, `${this.what} file`);
    // Start-up fast path (ARCHITECTURE.md; bench/startup.mjs, test/orders/output-loads.test.ts): the
    // writer is loaded by a store that writes, so a one-off that only reads its profile never loads it.
    const { default: ConfClass } = await import('conf');
    this.conf = new ConfClass<T>({
      cwd: this.dir,
      configName: this.name,
      projectName: 'opcli',
      configFileMode: 0o600,
      clearInvalidConfig: false,
      accessPropertiesByDotNotation: false,
      watch: false,
      deserialize: (text) => parseChecked(text, this.schema, this.path, this.what, this.quick),
      serialize: (value) => `${JSON.stringify(value, null, '\t')}\n`,
    });
  }

  /**
   * The file's content as it is on disk now, checked (a missing file reads as empty). The schema
   * is loaded by `open` when the file needs it; a file that another program changes after that,
   * into a form the quick check cannot vouch for, is refused until the command runs again (which
   * loads the schema and says what is wrong, if anything).
   */
  read(): T {
    try {
      return this.readChecked();
    } catch (error) {
      if (!(error instanceof SchemaNeeded)) throw error;
      throw new OpcliError(`The ${this.what} file ${this.path} changed while this command ran, into a form opcli does not write itself.`, {
        hint: 'Run the command again: it reads the file afresh and says what is wrong with it, if anything.',
        details: { path: this.path },
      });
    }
  }

  /** The file's content, checked; SchemaNeeded when the quick check cannot vouch for it and the schema is not loaded. */
  private readChecked(): T {
    const text = readPrivateFile(this.path, `${this.what} file`, undefined, MAX_CONFIG_BYTES);
    if (text === undefined) return this.empty();
    return parseChecked(text, this.schema, this.path, this.what, this.quick);
  }

  /** Replaces the file with `value` (checked first). Callers read before they write, after `prepareWrite`. */
  write(value: T): void {
    if (!this.conf || !this.schema) throw new Error(`internal: the ${this.what} file was written before prepareWrite()`);
    const checked = this.schema.parse(value);
    // conf recreates a missing folder without a mode; make sure it is the private one.
    ensurePrivateDir(this.dir);
    assertPrivateFile(this.path, `${this.what} file`);
    this.conf.store = checked;
  }
}
