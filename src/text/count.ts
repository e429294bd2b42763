/**
 * "1,234": counts in progress lines, summaries and messages, as `toLocaleString('en-US')` writes
 * them but without it. Its first call loads ICU's number data, pages of the Node binary that stay
 * in the peak RSS of the run (`orders list --all` has a 100 MiB goal; the figure:
 * docs/benchmarks.md#figures-behind-the-code), for a comma every three digits. No imports:
 * flags.ts loads it for every command.
 */
export function count(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+$)/g, ',');
  return n < 0 ? `-${digits}` : digits;
}

/** "1 row", "1,234 rows": a count with its noun, singular for one (`plural` when adding an s is wrong). */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${count(n)} ${n === 1 ? noun : plural}`;
}
