/** "1,234" as `toLocaleString('en-US')` writes it, without loading ICU's number data (it stays in the run's peak RSS). */
export function count(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+$)/g, ',');
  return n < 0 ? `-${digits}` : digits;
}

/** "1 row", "1,234 rows": a count with its noun, singular for one (`plural` when adding an s is wrong). */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${count(n)} ${n === 1 ? noun : plural}`;
}
