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

/** Parses a file's text, checked by `quick`, else `schema` (SchemaNeeded when not loaded); anything else is a DamagedFileError. */
function parseChecked<T>(text: string, schema: z.ZodType<T> | undefined, path: string, what: string, quick: QuickCheck): T {
  // An empty file is a write cut short (a full disk, a crash): read as empty, it would forget every profile and login.
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
  if (quick(raw)) return raw as T;
  if (!schema) throw new SchemaNeeded();
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = fieldIssues(parsed.error)[0];
  throw new DamagedFileError(path, what, `${issue?.path || '(top level)'}: ${issue?.message ?? 'invalid'}`);
}

/**
 * One JSON file of the config folder (settings.json, credentials.json). Reads are opcli's own, with
 * the private-file rules, checked by the quick check or the schema (ARCHITECTURE.md's fast paths);
 * anything else is a DamagedFileError. Writes are conf's: atomic, 0600, never clearing an invalid
 * file, and loaded only by a store that may write. Keys are not dotted paths (profile names may hold dots).
 *
 * The check before conf's write is enough although conf then follows links: the folder is one no
 * other user owns or can write, so only the user (or root) could swap the file for a link meanwhile.
 */
export class ConfFileStore<T extends { profiles: object }> {
  private conf: Conf<T> | undefined;
  /** The zod schema, once loaded: by a write, or by a read the quick check could not vouch for. */
  private schema: z.ZodType<T> | undefined;

  private constructor(
    readonly path: string,
    readonly dir: string,
    /** `settings` or `credentials`: the file's name and what messages call it. */
    private readonly what: string,
    private readonly loadSchema: () => Promise<z.ZodType<T>>,
    private readonly quick: QuickCheck,
  ) {}

  /** Opens `<dir>/<what>.json` (not creating it); a damaged or unsafe file throws here. `write` loads conf too. */
  static async open<T extends { profiles: object }>(
    dir: string,
    what: string,
    schema: () => Promise<z.ZodType<T>>,
    quick: QuickCheck,
    write = false,
  ): Promise<ConfFileStore<T>> {
    ensurePrivateDir(dir);
    const store = new ConfFileStore(join(dir, `${what}.json`), dir, what, schema, quick);
    if (write) await store.prepareWrite();
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
    // Start-up fast path (ARCHITECTURE.md): loaded by a store that writes only.
    const { default: ConfClass } = await import('conf');
    this.conf = new ConfClass<T>({
      cwd: this.dir,
      configName: this.what,
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
   * The file's content on disk now, checked (missing: empty). Changed meanwhile into a form the quick
   * check cannot vouch for, without the schema loaded, it is refused until the command runs again.
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

  private readChecked(): T {
    const text = readPrivateFile(this.path, `${this.what} file`, undefined, MAX_CONFIG_BYTES);
    if (text === undefined) return { profiles: {} } as T;
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
