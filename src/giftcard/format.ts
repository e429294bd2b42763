/** Small formatting helpers shared by the giftcard verbs. */

/** A card code with all but its last four characters hidden. */
export function maskCode(code: string): string {
  if (code.length <= 4) return '****';
  return `****${code.slice(-4)}`;
}
