import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerLogin } from './login.js';
import { register as registerLogout } from './logout.js';
import { register as registerRefresh } from './refresh.js';
import { register as registerStatus } from './status.js';
import { register as registerToken } from './token.js';

/** `opcli auth`: log in, show the login, print or refresh the token, log out. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('auth')
    .description('Log in, show the login, print or refresh the token, log out')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth login                     # browser login with PKCE
  $ opcli auth status
  $ curl -H "Authorization: Bearer $(opcli auth token)" …
  $ opcli auth logout

Environment: OPCLI_TOKEN (a bearer token that overrides the stored login), OPCLI_PROFILE,
OPCLI_CLIENT_ID, OPCLI_CLIENT_SECRET, OPCLI_BASE_URL.`,
    );
  registerLogin(group, deps);
  registerStatus(group, deps);
  registerToken(group, deps);
  registerRefresh(group, deps);
  registerLogout(group, deps);
}
