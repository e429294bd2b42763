/** Modules without types of their own: the part of the pgpass library (a dependency of node-postgres) that opcli uses, and SQL files. */
declare module 'pgpass/lib/helper.js' {
  import type { Stats } from 'node:fs';
  import type { Readable } from 'node:stream';
  const helper: {
    getFileName(env?: Record<string, string | undefined>): string;
    usePgPass(stats: Stats, file: string): boolean;
    getPassword(connInfo: { host: string; port: number; database: string; user: string }, stream: Readable, cb: (password: string | undefined) => void): void;
  };
  export default helper;
}

/** The record's migrations: SQL files bundled as text (bin/build.mjs and vitest.config.ts load them so). */
declare module '*.sql' {
  const text: string;
  export default text;
}
