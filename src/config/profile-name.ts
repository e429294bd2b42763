/** What a profile name may be: the ProfileName schema (settings-schema.ts) and profile.ts both check it. */
export const PROFILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;
/** What PROFILE_NAME asks for, in the words of every message about a profile name. */
export const PROFILE_NAME_RULE = 'expected letters, digits, "-", "_" or "." (neither "-" nor "." first), at most 64 characters';
