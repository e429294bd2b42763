/**
 * Names JavaScript objects already carry (`__proto__`, `constructor`, `toString` …) and `prototype`:
 * as a profile name, a lookup in a plain object finds the language's own property, and a write to
 * `__proto__` stores nothing. Refused as names rather than worked around in every reader.
 */
const RESERVED = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];

/** What a profile name may be: the ProfileName schema (settings-schema.ts) and profile.ts both check it. */
export const PROFILE_NAME = new RegExp(`^(?!(?:${RESERVED.join('|')})$)[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$`);
/** What PROFILE_NAME asks for, in the words of every message about a profile name. */
export const PROFILE_NAME_RULE =
  'expected letters, digits, "-", "_" or "." (neither "-" nor "." first), at most 64 characters, and not a name JavaScript reserves (__proto__, constructor, prototype, toString and the like)';
