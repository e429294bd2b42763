/**
 * One argument of a command line the user can paste into a POSIX shell (bash, zsh, dash): left as it
 * is when it holds only characters no shell treats specially, else in single quotes, inside which
 * nothing is special; a single quote itself is closed, escaped and reopened (`'\''`). `#` (a
 * comment), `~`, `*`, `$`, spaces and the empty string are quoted.
 */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
