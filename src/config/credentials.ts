import { join } from 'node:path';
import { z } from 'zod';
import { withFileLock } from './lock.js';
import { ensurePrivateDir } from './paths.js';
import { openConf, readConfFile } from './read-file.js';

/** How the stored access token was obtained. */
export const Grant = z.enum(['authorization_code', 'client_credentials', 'token']);
export type Grant = z.infer<typeof Grant>;

/** A stored token set, with the absolute expiry time. */
export const StoredToken = z.object({
  accessToken: z.string(),
  refreshToken: z.string().optional(),
  /** Epoch milliseconds; undefined when unknown (a pasted token). */
  expiresAt: z.number().optional(),
  scopes: z.array(z.string()).default([]),
  grant: Grant,
  storeId: z.string().optional(),
  /** Client credentials: the scope filter the login asked for (absent: all granted scopes). */
  requestedScopes: z.array(z.string()).optional(),
  obtainedAt: z.number(),
});
export type StoredToken = z.infer<typeof StoredToken>;

/** Everything secret about one profile. */
export const ProfileSecrets = z.object({
  clientSecret: z.string().optional(),
  providerToken: z.string().optional(),
  token: StoredToken.optional(),
});
export type ProfileSecrets = z.infer<typeof ProfileSecrets>;

const CredentialsFile = z.object({
  profiles: z.record(z.string(), ProfileSecrets).default({}),
});
type CredentialsFile = z.infer<typeof CredentialsFile>;

/**
 * The credential store (credentials.json, 0600 in a 0700 folder) through conf. Reads are plain;
 * every write is a read-modify-write under the cross-process lock, because several opcli processes
 * may refresh or log out at once and conf does not support concurrent writers.
 */
export class CredentialStore {
  readonly path: string;
  readonly dir: string;
  private readonly conf: import('conf').default<CredentialsFile>;

  private constructor(dir: string, conf: import('conf').default<CredentialsFile>) {
    this.dir = dir;
    this.conf = conf;
    this.path = conf.path;
  }

  /** Opens the credential store in `dir`. */
  static async open(dir: string): Promise<CredentialStore> {
    ensurePrivateDir(dir);
    const { default: Conf } = await import('conf');
    const conf = openConf(
      () => new Conf<CredentialsFile>({ cwd: dir, configName: 'credentials', configFileMode: 0o600, projectName: 'opcli' }),
      join(dir, 'credentials.json'),
      'credentials',
    );
    return new CredentialStore(dir, conf);
  }

  /** The secrets of one profile as they are on disk now. */
  read(profile: string): ProfileSecrets {
    return readConfFile(this.conf, CredentialsFile, 'credentials').profiles[profile] ?? {};
  }

  /** Names of the profiles that hold any secret. */
  profiles(): string[] {
    return Object.keys(readConfFile(this.conf, CredentialsFile, 'credentials').profiles).sort();
  }

  /** Runs `fn` under the credentials lock (refresh, logout and revocation use this). */
  withLock<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(this.dir, 'credentials', fn);
  }

  /**
   * Replaces one profile's secrets with `fn(current)`; undefined removes them. Call it inside
   * `withLock` (it does not take the lock itself, so a caller can read, call the server and write
   * under one lock). Written atomically: a temporary file renamed over the old one.
   */
  writeLocked(profile: string, fn: (current: ProfileSecrets) => ProfileSecrets | undefined): ProfileSecrets | undefined {
    const file = readConfFile(this.conf, CredentialsFile, 'credentials');
    const next = fn(file.profiles[profile] ?? {});
    if (next === undefined || Object.values(next).every((v) => v === undefined)) delete file.profiles[profile];
    else file.profiles[profile] = ProfileSecrets.parse(next);
    this.conf.store = file;
    return next;
  }

  /** Locks, then updates one profile's secrets. */
  update(profile: string, fn: (current: ProfileSecrets) => ProfileSecrets | undefined): Promise<ProfileSecrets | undefined> {
    return this.withLock(async () => this.writeLocked(profile, fn));
  }
}
