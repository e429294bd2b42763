/**
 * The password file libpq reads (~/.pgpass; %APPDATA%\postgresql\pgpass.conf on Windows; PGPASSFILE),
 * through the pgpass library node-postgres itself uses: its file name from the run's environment,
 * its rule that a file others can read is ignored (with a warning), its matching of host, port,
 * database and user with `*`.
 */
import { createReadStream, stat } from 'node:fs';
import helper from 'pgpass/lib/helper.js';

/** The password file's password for this connection, or undefined. */
export function fromPasswordFile(
  target: { host: string; port: number; database: string; user: string },
  env: Record<string, string | undefined>,
): Promise<string | undefined> {
  const file = helper.getFileName(env);
  return new Promise((resolve) => {
    stat(file, (error, stats) => {
      if (error || !helper.usePgPass(stats, file)) {
        resolve(undefined);
        return;
      }
      helper.getPassword(target, createReadStream(file), (password) => resolve(password));
    });
  });
}
