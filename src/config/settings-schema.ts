/** The zod schemas of the settings file; what each setting means is said once, in setting-keys.ts's DESCRIPTIONS. */
import * as z from 'zod';
import { lazy } from '../schemas.js';
import { PROGRESS_MODES } from '../core/ports.js';
import { PROFILE_NAME, PROFILE_NAME_RULE } from './profile-name.js';

/** Non-secret settings of one profile. Secrets live in the credential store. */
export const ProfileSettings = lazy(() =>
  z.object({
    baseUrl: z.url().optional(),
    authorizeUrl: z.url().optional(),
    clientId: z.string().optional(),
    scopes: z.array(z.string()).optional(),
    storeId: z.string().optional(),
    /** CHOICE (docs/spec-choices.md#record-dir): a folder shared by every operator, holding the record (default: the config folder). */
    recordDir: z.string().optional(),
    recordUrl: z.string().optional(),
    proxy: z.string().optional(),
    noProxy: z.string().optional(),
    /** CHOICE (docs/spec-choices.md#loopback-not-proxied): send loopback requests through the proxy too (default false). */
    proxyLoopback: z.boolean().optional(),
    caFile: z.string().optional(),
    /** CHOICE (docs/spec-choices.md#not-processed-statuses): the statuses that guarantee a POST was not processed (421 and 429 always are). */
    notProcessedStatuses: z.array(z.number().int()).optional(),
    progress: z.enum(PROGRESS_MODES).optional(),
    accessible: z.boolean().optional(),
    provider: z
      .object({
        name: z.string().optional(),
        apiUrl: z.url().optional(),
        shopUrl: z.string().optional(),
        triggerId: z.string().optional(),
        triggerUrl: z.url().optional(),
        nativeUrl: z.url().optional(),
        triggerSendsToken: z.boolean().optional(),
        /** CHOICE (docs/spec-choices.md#provider-currency): the provider's amounts carry no currency in the spec; this names it (default USD). */
        currency: z.string().optional(),
        /** CHOICE (docs/spec-choices.md#amount-ceiling): the largest credit issued without --allow-large, in the profile's currency (default 1000.00). */
        maxAmount: z.string().optional(),
      })
      .optional(),
  }),
);
export type ProfileSettings = z.infer<typeof ProfileSettings>;

/** Profile names are identifiers: letters, digits, "-", "_" and "." (not first), at most 64 characters. */
export const ProfileName = lazy(() => z.string().regex(PROFILE_NAME, { message: PROFILE_NAME_RULE }));

/** The settings file. */
export const SettingsFile = lazy(() =>
  z.object({
    currentProfile: ProfileName.optional(),
    profiles: z.record(ProfileName, ProfileSettings).default({}),
  }),
);
export type SettingsFile = z.infer<typeof SettingsFile>;
