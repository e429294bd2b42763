/** The zod schemas of the credentials file. */
import * as z from 'zod';
import { lazy } from '../schemas.js';
import { ProfileName } from './settings-schema.js';

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
    /** The origin of the base URL it was issued for (absent: stored by an older opcli; see src/config/origin.ts). */
    origin: z.string().optional(),
    /** The token endpoint that issued it: a refresh or a client-credentials re-run goes there. */
    tokenUrl: z.string().optional(),
  }),
);
export type StoredToken = z.infer<typeof StoredToken>;

/** Everything secret about one profile. */
export const ProfileSecrets = lazy(() =>
  z.object({
    clientSecret: z.string().optional(),
    /** The origin of the base URL the client secret was stored for (absent: bound at the next login). */
    clientSecretOrigin: z.string().optional(),
    providerToken: z.string().optional(),
    /** The origin of the provider API URL the provider token was stored for. */
    providerTokenOrigin: z.string().optional(),
    /** The admin secret of the local sandbox this profile points at (written by `opcli sandbox --write-profile`). */
    sandboxAdminSecret: z.string().optional(),
    /** The password of the profile's record-url (src/record-pg/url.ts), never in the settings file. */
    recordPassword: z.string().optional(),
    token: StoredToken.optional(),
  }),
);
export type ProfileSecrets = z.infer<typeof ProfileSecrets>;

/** The credentials file. */
export const CredentialsFile = lazy(() =>
  z.object({
    profiles: z.record(ProfileName, ProfileSecrets).default({}),
  }),
);
export type CredentialsFile = z.infer<typeof CredentialsFile>;
