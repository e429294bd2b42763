/**
 * The seed of a fuzz run: FUZZ_SEED when given (to replay a failure), else a fresh one. Every fuzz
 * file prints it; `FUZZ_SEED=<n> npx vitest run test/fuzz` draws the same cases again.
 */
export const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** How many cases each generator draws on average (FUZZ_RUNS_PER_GENERATOR, default 2). */
export const PER_GENERATOR = Number(process.env.FUZZ_RUNS_PER_GENERATOR ?? 2);
