import { credentialsFile } from '../core/schema-checks.js';
import type { CredentialsFile, ProfileSecrets } from './credentials-schema.js';
import { withFileLock } from './lock.js';
import { tightenSecretFile } from './private-file.js';
import { ConfFileStore } from './read-file.js';

export type { Grant, ProfileSecrets, StoredToken } from './credentials-schema.js';

// Start-up fast path (ARCHITECTURE.md): zod loads for a write or a file the quick check cannot vouch for.
const schemas = () => import('./credentials-schema.js');

/** The credential store (credentials.json): every write is a read-modify-write under the lock, as several runs may refresh at once. */
export class CredentialStore {
  private constructor(private readonly file: ConfFileStore<CredentialsFile>) {}

  /** Opens the credential store in `dir` (the folder checked, or created 0700); a file others can read is made 0600, with a `warn`. */
  static async open(dir: string, warn?: (line: string) => void): Promise<CredentialStore> {
    const file = await ConfFileStore.open(dir, 'credentials', async () => (await schemas()).CredentialsFile, credentialsFile);
    const tightened = tightenSecretFile(file.path, 'credentials file');
    if (tightened) warn?.(tightened);
    return new CredentialStore(file);
  }

  /** The secrets of one profile as they are on disk now. */
  read(profile: string): ProfileSecrets {
    return this.file.read().profiles[profile] ?? {};
  }

  /** Names of the profiles that hold any secret. */
  profiles(): string[] {
    return Object.keys(this.file.read().profiles).sort();
  }

  /** Runs `fn` under the credentials lock (refresh, logout and revocation use this); `writeLocked` works inside it. */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    // Reading needs no writer; the writer (conf) is loaded only by those who take the lock to write.
    await this.file.prepareWrite();
    return withFileLock(this.file.dir, 'credentials', fn);
  }

  /** Replaces one profile's secrets with `fn(current)` (undefined removes them), inside `withLock`: read, call and write under one lock. */
  writeLocked(profile: string, fn: (current: ProfileSecrets) => ProfileSecrets | undefined): ProfileSecrets | undefined {
    const file = this.file.read();
    const next = fn(file.profiles[profile] ?? {});
    if (next === undefined || Object.values(next).every((v) => v === undefined)) delete file.profiles[profile];
    else file.profiles[profile] = next;
    this.file.write(file);
    return next;
  }

  /** Locks, then updates one profile's secrets. */
  update(profile: string, fn: (current: ProfileSecrets) => ProfileSecrets | undefined): Promise<ProfileSecrets | undefined> {
    return this.withLock(async () => this.writeLocked(profile, fn));
  }
}
