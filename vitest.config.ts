import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The record's migrations are numbered SQL files imported as text, as bin/build.mjs bundles them.
  plugins: [
    {
      name: 'sql-as-text',
      transform: (code: string, id: string) => (id.endsWith('.sql') ? { code: `export default ${JSON.stringify(code)};`, map: null } : undefined),
    },
  ],
  test: {
    include: ['test/**/*.test.ts'],
    // Timeouts catch a hang, never a slow machine: no test's pass may depend on how long it took. On
    // two cores with another suite beside it, tests that take 3-5 s alone took over 30 s (the old
    // limit) and failed; ten minutes is far beyond any test on any machine the suite runs on, and
    // still ends a hung one with its name. Tests that spawn processes do not set lower limits.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Two cores: run files in parallel on forks, but not so many that loopback timing tests starve.
    pool: 'forks',
    maxWorkers: 2,
    // A worker keeps the modules it loaded from one test file to the next instead of loading src/,
    // zod, commander and vitest again for each file (what it saved: docs/benchmarks.md#the-test-suite).
    // The price: a test file must leave nothing behind (servers closed, timers cleared, process
    // listeners removed, globals restored), which every file does today.
    isolate: false,
    // What a file may still leave behind by mistake, undone after each test: spies, stubbed
    // environment variables and globals.
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    globalSetup: ['test/global-setup.ts'],
  },
});
