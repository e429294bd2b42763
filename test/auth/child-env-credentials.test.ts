/**
 * Issue 38 row 12: `npm_config_https_proxy` with a password reached the browser. Every variable
 * named as a proxy, whatever program it belongs to and in any case, loses its user and password, and
 * so does a URL with credentials in any other variable.
 */
import { describe, expect, test } from 'vitest';
import { childEnv } from '../../src/core/child-env.js';

const PASSWORD = 'pr0xy-pa55word';

describe('childEnv: proxy credentials under any name', () => {
  test.each([
    'npm_config_https_proxy',
    'npm_config_proxy',
    'NPM_CONFIG_HTTPS_PROXY',
    'npm_config_http_proxy',
    'YARN_HTTPS_PROXY',
    'yarn_proxy',
    'GIT_PROXY',
    'Https_Proxy',
    'socks_proxy',
    'no_proxy',
  ])('%s keeps its host and loses user and password', (name) => {
    const out = childEnv({ [name]: `http://alice:${PASSWORD}@proxy.corp:3128`, TERM: 'xterm' });
    expect(out).toEqual({ [name]: 'http://proxy.corp:3128', TERM: 'xterm' });
  });

  test('without a scheme, or unreadable with an @, as the proxies opcli reads', () => {
    expect(childEnv({ npm_config_proxy: `alice:${PASSWORD}@proxy.corp:3128` })).toEqual({ npm_config_proxy: 'proxy.corp:3128' });
    expect(childEnv({ npm_config_https_proxy: `http://%zz:${PASSWORD}@[bad` })).toEqual({});
  });

  test('a URL with credentials in any other variable loses them; the rest is as it was', () => {
    const out = childEnv({
      DATABASE_URL: `postgres://app:${PASSWORD}@db.internal:5432/shop`,
      MIRRORS: `https://a.example/x https://bob:${PASSWORD}@b.example/y`,
      ODD: `git+ssh://git:p@ss${PASSWORD}@host/repo`,
      PATH: '/usr/bin:/bin',
      DISPLAY: ':0',
      NOTE: 'mail me at alice@example.com',
    });
    expect(JSON.stringify(out)).not.toContain(PASSWORD);
    expect(out).toEqual({
      DATABASE_URL: 'postgres://db.internal:5432/shop',
      MIRRORS: 'https://a.example/x https://b.example/y',
      ODD: 'git+ssh://host/repo',
      PATH: '/usr/bin:/bin',
      DISPLAY: ':0',
      NOTE: 'mail me at alice@example.com',
    });
  });
});
