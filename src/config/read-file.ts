import { join } from 'node:path';
import type Conf from 'conf';
import type { z } from 'zod';
import { ExitCode, OpcliError } from '../errors.js';
import { fieldIssues } from '../field-issues.js';
import { assertPrivateFile, ensurePrivateDir, readPrivateFile } from './private-file.js';

/** A settings or credentials file that cannot be used as it is: exit 2, never overwritten. */
export class DamagedFileError extends OpcliError {
  constructor(path: string, what: string, problem: string, cause?: unknown) {
    super(`The ${what} file ${path} is damaged: ${problem}.`, {
      exitCode: ExitCode.usage,
      hint: `opcli does not overwrite it. Restore it from a backup or fix it by hand, or move it aside to start afresh: \`mv ${path} ${path}.bak\`.`,
      details: { path },
      cause,
    });
  }
}

/** Parses a file's text and checks it against `schema`; anything else is a DamagedFileError. */
function parseChecked<T>(text: string, schema: z.ZodType<T>, path: string, what: string): T {
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
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = fieldIssues(parsed.error)[0];
  throw new DamagedFileError(path, what, `${issue?.path || '(top level)'}: ${issue?.message ?? 'invalid'}`);
}

/**
 * One JSON file of the config folder (settings.json, credentials.json). Reads are opcli's own: the
 * file is opened without following a link and checked with the private-file rules (a regular file
 * you own that others cannot write, in a folder only you can write), its text is read from that
 * same descriptor and checked against the zod schema, so a file that is not JSON, not an object or
 * not the schema is a DamagedFileError naming it. Writes are conf's: atomic (a temporary file
 * renamed over the old one), mode 0600; conf never clears an invalid file (`clearInvalidConfig:
 * false`) and every write reads first, so a damaged file is never replaced. The writer is made only
 * by a store that may write (`open(..., { write: true })`, or `prepareWrite()`). Keys are not dotted
 * paths (profile names may hold dots) and nothing is watched.
 *
 * Why the check before conf's write is enough, although conf then opens the path itself (following
 * links): the checks refuse any folder that another user owns or can write into, so between the
 * check and conf's write only the user (or root) could swap the file for a link, and they can read
 * their own secrets anyway. Nobody else can win that race.
 */
export class ConfFileStore<T extends Record<string, unknown>> {
  private conf: Conf<T> | undefined;

  private constructor(
    readonly path: string,
    private readonly dir: string,
    private readonly name: string,
    private readonly schema: z.ZodType<T>,
    private readonly what: string,
    private readonly empty: () => T,
  ) {}

  /**
   * Opens `<dir>/<name>.json` (without creating it); a damaged or unsafe file throws here. With
   * `write`, the writer is made too, so `write` can be called at once.
   */
  static async open<T extends Record<string, unknown>>(
    dir: string,
    name: string,
    schema: z.ZodType<T>,
    what: string,
    options: { write?: boolean; empty: () => T },
  ): Promise<ConfFileStore<T>> {
    ensurePrivateDir(dir);
    const store = new ConfFileStore(join(dir, `${name}.json`), dir, name, schema, what, options.empty);
    if (options.write) await store.prepareWrite();
    else store.read();
    return store;
  }

  /** Makes the writer (conf), which reads and checks the file in its constructor. */
  async prepareWrite(): Promise<void> {
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
      deserialize: (text) => parseChecked(text, this.schema, this.path, this.what),
      serialize: (value) => `${JSON.stringify(value, null, '\t')}\n`,
    });
  }

  /** The file's content as it is on disk now, checked (a missing file reads as empty). */
  read(): T {
    const text = readPrivateFile(this.path, `${this.what} file`);
    if (text === undefined) return this.empty();
    return parseChecked(text, this.schema, this.path, this.what);
  }

  /** Replaces the file with `value` (checked first). Callers read before they write, after `prepareWrite`. */
  write(value: T): void {
    if (!this.conf) throw new Error(`internal: the ${this.what} file was written before prepareWrite()`);
    const checked = this.schema.parse(value);
    // conf recreates a missing folder without a mode; make sure it is the private one.
    ensurePrivateDir(this.dir);
    assertPrivateFile(this.path, `${this.what} file`);
    this.conf.store = checked;
  }
}
