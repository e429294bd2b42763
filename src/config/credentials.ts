import * as z from 'zod';
import { withFileLock } from './lock.js';
import { lazy } from '../schemas.js';
import { quickCredentials } from './quick-check.js';
import { ConfFileStore } from './read-file.js';
import { ProfileName } from './settings.js';

/** How the stored access token was obtained. */
export const Grant = lazy(() => z.enum(['authorization_code', 'client_credentials', 'token']));
export type Grant = z.infer<typeof Grant>;

/** A stored token set, with the absolute expiry time. */
export const StoredToken = lazy(() =>
  z.object({
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
  }),
);
export type StoredToken = z.infer<typeof StoredToken>;

/** Everything secret about one profile. */
export const ProfileSecrets = lazy(() =>
  z.object({
    clientSecret: z.string().optional(),
    providerToken: z.string().optional(),
    token: StoredToken.optional(),
  }),
);
export type ProfileSecrets = z.infer<typeof ProfileSecrets>;

/** The credentials file (exported for the quick check's test). */
export const CredentialsFile = lazy(() =>
  z.object({
    profiles: z.record(ProfileName, ProfileSecrets).default({}),
  }),
);
type CredentialsFile = z.infer<typeof CredentialsFile>;

/**
 * The credential store (credentials.json, 0600 in a private folder, kept through conf). Reads are
 * plain; every write is a read-modify-write under the cross-process lock, because several opcli
 * processes may refresh or log out at once and conf does not support concurrent writers.
 */
export class CredentialStore {
  readonly path: string;
  readonly dir: string;
  private readonly file: ConfFileStore<CredentialsFile>;

  private constructor(dir: string, file: ConfFileStore<CredentialsFile>) {
    this.dir = dir;
    this.file = file;
    this.path = file.path;
  }

  /** Opens the credential store in `dir`; the folder is checked (or created 0700). */
  static async open(dir: string): Promise<CredentialStore> {
    return new CredentialStore(dir, await ConfFileStore.open(dir, 'credentials', CredentialsFile, 'credentials', { quick: quickCredentials<CredentialsFile> }));
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
    return withFileLock(this.dir, 'credentials', fn);
  }

  /**
   * Replaces one profile's secrets with `fn(current)`; undefined removes them. Call it inside
   * `withLock` (it does not take the lock itself, so a caller can read, call the server and write
   * under one lock). Written atomically: a temporary file renamed over the old one.
   */
  writeLocked(profile: string, fn: (current: ProfileSecrets) => ProfileSecrets | undefined): ProfileSecrets | undefined {
    const file = this.file.read();
    const next = fn(file.profiles[profile] ?? {});
    if (next === undefined || Object.values(next).every((v) => v === undefined)) delete file.profiles[profile];
    else file.profiles[profile] = ProfileSecrets.parse(next);
    this.file.write(file);
    return next;
  }

  /** Locks, then updates one profile's secrets. */
  update(profile: string, fn: (current: ProfileSecrets) => ProfileSecrets | undefined): Promise<ProfileSecrets | undefined> {
    return this.withLock(async () => this.writeLocked(profile, fn));
  }
}
