import { UsageError } from '../core/errors.js';
import { shellAdvice } from '../core/platform.js';

/**
 * Reads one OPCLI_* variable that carries a credential or a name: surrounding whitespace (a pasted
 * newline) is trimmed with a warning; a control character inside is refused, naming the variable.
 */
export function envValue(env: Record<string, string | undefined>, name: string, warnings: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = raw.trim();
  if (value === '') throw new UsageError(`${name} is set but holds only whitespace.`, `Unset it (\`${shellAdvice().unsetEnv(name)}\`) or give it a value.`);
  if (value !== raw) warnings.push(`Warning: ${name} had spaces or a line break around it; they were removed.`);
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new UsageError(
      `${name} contains a control character, so it cannot be a valid value.`,
      `Set ${name} again without the stray character (check for a pasted escape sequence).`,
    );
  }
  // U+FFFD is what bytes that were not UTF-8 decode to: the value is not the one that was meant, and
  // a token with it cannot be sent in a header (it would fail as if the connection were lost).
  if (/[\uFFFD]|[\uD800-\uDFFF]/.test(value)) {
    throw new UsageError(
      `${name} holds characters that are not valid text (U+FFFD: bytes that were not UTF-8).`,
      `Set ${name} again from the original value (check the file or terminal encoding it came from).`,
    );
  }
  return value;
}
