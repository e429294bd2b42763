import type { z } from 'zod';
import { ExitCode, OpcliError } from '../errors.js';
import { fieldIssues } from '../schemas.js';
import { readPrivateFile, writePrivateFileAtomic } from './private-file.js';

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

/**
 * One JSON file of the config folder (settings.json, credentials.json): read without following a
 * link and checked against its schema on every read; written atomically, 0600. A file that is not
 * JSON, is not an object, or does not match the schema is reported with its path and what is wrong,
 * and is never replaced (writes read first). A missing file reads as `empty`.
 */
export class JsonFileStore<T> {
  constructor(
    readonly path: string,
    private readonly schema: z.ZodType<T>,
    private readonly what: string,
  ) {}

  /** The file's content, checked. */
  read(): T {
    const text = readPrivateFile(this.path, `${this.what} file`);
    if (text === undefined || text.trim() === '') return this.schema.parse({});
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new DamagedFileError(this.path, this.what, `it is not valid JSON (${(error as Error).message})`, error);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      const kind = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`;
      throw new DamagedFileError(this.path, this.what, `it holds ${kind} where an object ({ "profiles": … }) was expected`);
    }
    const parsed = this.schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    const issue = fieldIssues(parsed.error)[0];
    throw new DamagedFileError(this.path, this.what, `${issue?.path || '(top level)'}: ${issue?.message ?? 'invalid'}`);
  }

  /** Replaces the file with `value` (checked first). */
  write(value: T): void {
    writePrivateFileAtomic(this.path, `${JSON.stringify(this.schema.parse(value), null, '\t')}\n`);
  }
}
