import type { TourStep } from './tour.js';

/** Tour steps of the auth commands: a real PKCE login against the sandbox, then the login's status. */
export const steps: TourStep[] = [
  {
    title: 'Log in through the browser (authorization code + PKCE)',
    async run(ctx) {
      ctx.say('opcli listens on a free port of 127.0.0.1, prints the consent link and opens it.');
      ctx.say('The tour plays the browser; the sandbox approves at once and redirects to the loopback port.');
      await ctx.run(['auth', 'login']);
    },
  },
  {
    title: 'What is stored: grant, store, scopes, expiry; never a secret',
    async run(ctx) {
      await ctx.run(['auth', 'status']);
      ctx.say('Tokens are refreshed on their own 5 minutes before they expire; `auth refresh` forces it (the refresh token rotates).');
      await ctx.run(['auth', 'refresh']);
    },
  },
];

/** The last steps of the tour (run after every other group): log out, revoking both tokens. */
export const finalSteps: TourStep[] = [
  {
    title: 'Log out: revoke the refresh and access tokens, delete them here',
    async run(ctx) {
      await ctx.run(['auth', 'logout']);
      ctx.say('From here every command that needs the API exits 4 (log in needed) until the next `opcli auth login`.');
    },
  },
];
