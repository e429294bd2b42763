/**
 * Long streaming runs used to switch V8 flags here at run time (`v8.setFlagsFromString`), a
 * process-wide switch Node warns about and one that cannot resize a heap that already exists. The
 * flags are now passed where the process starts: bin/opcli.cjs runs `orders list --all/--limit` and
 * `claims file --from` with `--max-semi-space-size=4` and `--liftoff-only` (see LEAN_FLAGS there);
 * `--optimize-for-size` cost ~35% more CPU for the same memory the smaller young generation saves.
 *
 * Kept only so callers that still import it (the claims batch) need no change in this release;
 * it does nothing and can be removed with its last caller.
 */
export async function leanMemory(_options: { liftoffOnly?: boolean } = {}): Promise<void> {}
