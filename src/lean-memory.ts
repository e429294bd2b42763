/**
 * Keeps the footprint of a long streaming run small, for any number of orders or rows: V8 grows
 * its heap conservatively (`--optimize-for-size`), and with `liftoffOnly` compiles undici's llhttp
 * WebAssembly with the baseline compiler only (its optimising tier alone costs ~35 MiB of RSS, and
 * parsing is not the bottleneck of a page walk). Measured here: orders list over 100,000 orders
 * ~135 → ~92 MiB peak; claims --validate-only over 300,000 rows ~118 → ~88 MiB; a 10,000-claim
 * batch ~121 → ~93 MiB with no throughput change beyond run-to-run noise. Process-wide: call it
 * before the first request compiles the parser.
 */
export async function leanMemory(options: { liftoffOnly?: boolean } = {}): Promise<void> {
  const v8 = await import('node:v8');
  if (options.liftoffOnly) v8.setFlagsFromString('--liftoff-only');
  v8.setFlagsFromString('--optimize-for-size');
}
