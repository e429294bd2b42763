/** The decision before anything is spawned: BROWSER, SSH, no display, or the platform's default opener. */
import { describe, expect, test } from 'vitest';
import { browserPlan } from '../../src/oauth/browser.js';

const URL_ = 'http://127.0.0.1:5000/v1/oauth/authorize?x=1';

describe('browserPlan', () => {
  test.each([
    ['macOS', {}, 'darwin'],
    ['Windows', {}, 'win32'],
    ['WSL (no display needed)', { WSL_DISTRO_NAME: 'Ubuntu' }, 'linux'],
    ['Linux with X', { DISPLAY: ':0' }, 'linux'],
    ['Linux with Wayland', { WAYLAND_DISPLAY: 'wayland-0' }, 'linux'],
  ] as const)('%s: the platform default (through open)', (_name, env, platform) => {
    expect(browserPlan(URL_, env, platform)).toEqual({ platformDefault: true });
  });

  test('SSH or no display: nothing is tried, with the reason', () => {
    expect(browserPlan(URL_, { DISPLAY: ':0', SSH_CONNECTION: '1 2 3 4' }, 'linux')).toEqual({ unavailable: expect.stringContaining('SSH session') });
    expect(browserPlan(URL_, { SSH_TTY: '/dev/pts/1' }, 'darwin')).toEqual({ unavailable: expect.stringContaining('SSH session') });
    expect(browserPlan(URL_, {}, 'linux')).toEqual({ unavailable: expect.stringContaining('no desktop session') });
    expect(browserPlan(URL_, {}, 'freebsd')).toEqual({ unavailable: expect.stringContaining('no desktop session') });
  });

  test('BROWSER wins everywhere: %s is the link, else the link is appended', () => {
    expect(browserPlan(URL_, { BROWSER: 'firefox --new-tab %s', SSH_TTY: 'x' }, 'linux')).toEqual({ command: 'firefox', args: ['--new-tab', URL_] });
    expect(browserPlan(URL_, { BROWSER: '"/opt/my browser/run" -p' }, 'darwin')).toEqual({ command: '/opt/my browser/run', args: ['-p', URL_] });
    expect(browserPlan(URL_, { BROWSER: '   ' }, 'linux')).toEqual({ unavailable: expect.stringContaining('no desktop session') });
  });
});
