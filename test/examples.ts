/** Example objects that tests of more than one area send or parse. */

/** A complete session context, as the session-verify endpoint answers it. */
export const sessionContext = {
  userId: 'u',
  email: 'm@x.co',
  firstName: 'F',
  lastName: 'L',
  storeId: 's',
  installationId: 'i',
  applicationId: 'a',
  clientId: 'c',
  scopes: [],
} as const;
