/**
 * Secrets given to a command: from standard input (`--stdin`), from a file (`--from-file PATH`), or,
 * still accepted, as an argument, which other users see in `ps` and the shell keeps in its history:
 * that earns a warning naming the safer forms.
 */
import { type Stats, readFileSync, statSync } from 'node:fs';
import type { Deps } from '../cli/deps.js';
import { UsageError } from '../core/errors.js';
import { readStdinText } from '../input/data.js';

// A secret, a token or a redirect URL is far below this; a bigger file is the wrong file.
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * Reads a secret from the file `path` given to `flag`: a regular file (at most 64 KiB) or a pipe
 * (`--from-file <(pass show x)`, `/dev/stdin`). One trailing line break is dropped. A file other
 * users can read is used, with a warning. Anything else is a usage error naming the flag (exit 2).
 */
export function readSecretFile(path: string, flag: string, warn: (text: string) => void): string {
  // CHOICE (docs/spec-choices.md#secret-files): links followed, pipes taken, a loose mode warned about, not refused.
  let st: Stats;
  try {
    st = statSync(path);
  } catch (error) {
    throw fileError(path, flag, error);
  }
  if (st.isDirectory()) throw new UsageError(`${flag} ${path} is a folder, not a file.`, `Give the file that holds the value.`);
  if (st.isFile() && st.size > MAX_SECRET_FILE_BYTES)
    throw new UsageError(
      `${flag} ${path} is ${st.size} bytes: too big to be one value (at most ${MAX_SECRET_FILE_BYTES}).`,
      'Give the file that holds only the value.',
    );
  if (!st.isFile() && !st.isFIFO() && !st.isCharacterDevice()) throw new UsageError(`${flag} ${path} is not a file.`, 'Give the file that holds the value.');
  if (st.isFile() && (st.mode & 0o044) !== 0 && process.platform !== 'win32') {
    warn(
      `Warning: ${path} can be read by ${st.mode & 0o004 ? 'every user' : 'its group'} (mode 0${(st.mode & 0o777).toString(8)}); \`chmod 600 ${path}\` keeps the secret yours.\n`,
    );
  }
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (error) {
    throw fileError(path, flag, error);
  }
  if (buf.length > MAX_SECRET_FILE_BYTES)
    throw new UsageError(
      `${flag} ${path} gave more than ${MAX_SECRET_FILE_BYTES} bytes: too much to be one value.`,
      'Give the file that holds only the value.',
    );
  return buf.toString('utf8').replace(/\r?\n$/, '');
}

function fileError(path: string, flag: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'cannot be read (permission denied)' : `cannot be read (${code ?? (error as Error).message})`;
  return new UsageError(`${flag} ${path} ${why}.`, 'Give the path of the file that holds the value.');
}

/** Where a command's secret comes from: `--stdin`, `--from-file`, or an argument. */
export interface SecretSource {
  stdin?: boolean;
  fromFile?: string;
  argument?: string;
}

/**
 * The value from `--stdin` (one trailing line break dropped), `--from-file`, or the argument (with
 * the warning, unless `secret` is false); undefined when none was given. More than one is a usage
 * error, raised before anything is read.
 */
export async function readSecret(
  deps: Pick<Deps, 'io' | 'err'>,
  source: SecretSource,
  what: string,
  options: { stdinFlag?: string; fileFlag?: string; secret?: boolean } = {},
): Promise<string | undefined> {
  const { stdinFlag = '--stdin', fileFlag = '--from-file', secret = true } = options;
  const given = [source.argument !== undefined && 'an argument', source.stdin && stdinFlag, source.fromFile !== undefined && fileFlag].filter(Boolean);
  if (given.length > 1) throw new UsageError(`Give ${what} one way: ${given.join(' and ')} were both given.`, `Use one of them alone.`);
  if (source.stdin) return (await readStdinText(deps)).replace(/\r?\n$/, '');
  if (source.fromFile !== undefined) return readSecretFile(source.fromFile, fileFlag, (text) => deps.err(text));
  if (source.argument !== undefined && secret) warnSecretArgument(deps, what, `\`${stdinFlag}\` or \`${fileFlag} PATH\``);
  return source.argument;
}

/** Warns (stderr) that `what`, given as an argument, is visible to others; `safer` names the way to use instead. */
export function warnSecretArgument(deps: Pick<Deps, 'err'>, what: string, safer: string): void {
  deps.err(`Warning: ${what} given as an argument is visible to other users in \`ps\` and stays in your shell history; next time use ${safer}.\n`);
}
