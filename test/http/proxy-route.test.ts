/**
 * Which route a request takes (src/http/client.ts): the variables in the order undici and curl read
 * them, the profile's settings winning, and NO_PROXY's names, wildcards, ports, IPv6 and CIDR.
 */
import { describe, expect, test } from 'vitest';
import { readProxyConfig, routeFor } from '../../src/http/client.js';

function route(url: string, env: Record<string, string | undefined>, settings = {}) {
  const warnings: string[] = [];
  const config = readProxyConfig(settings, env, (line) => warnings.push(line));
  return { reason: routeFor(config, new URL(url)).reason, warnings };
}

describe('proxy routes', () => {
  test('the variable for the scheme, lower case first, ALL_PROXY last; the proxy setting wins', () => {
    expect(route('https://api.example.com', { HTTPS_PROXY: 'http://a:1', https_proxy: 'http://b:2' }).reason).toBe(
      'through the proxy http://b:2 (https_proxy)',
    );
    expect(route('http://api.example.com', { HTTPS_PROXY: 'http://a:1', ALL_PROXY: 'c:3' }).reason).toBe('through the proxy http://c:3 (ALL_PROXY)');
    expect(route('https://api.example.com', { HTTPS_PROXY: 'http://a:1' }, { proxy: 'http://s:9' }).reason).toBe(
      'through the proxy http://s:9 (the proxy setting)',
    );
    expect(route('https://api.example.com', {}).reason).toBe('direct (no proxy is configured)');
  });

  test.each([
    ['https://api.example.com', 'example.com', 'example.com'],
    ['https://api.example.com', '.example.com', '.example.com'],
    ['https://api.example.com', '*.example.com', '*.example.com'],
    ['https://api.example.com:8443', 'api.example.com:8443', 'api.example.com:8443'],
    ['https://10.1.2.3', '10.0.0.0/8', '10.0.0.0/8'],
    ['https://[fd00::5]', 'fd00::/8', 'fd00::/8'],
    ['https://[fd00::5]:8443', '[fd00:0::5]:8443', '[fd00:0::5]:8443'],
  ])('%s with NO_PROXY %s goes direct', (url, noProxy, entry) => {
    expect(route(url, { HTTPS_PROXY: 'http://p:1', NO_PROXY: `other.test,${noProxy}` }).reason).toBe(`direct (NO_PROXY matched "${entry}")`);
  });

  test.each([
    ['https://api.example.com', 'api.example.com:444'],
    ['https://notexample.com', 'example.com'],
    ['https://11.1.2.3', '10.0.0.0/8'],
  ])('%s with NO_PROXY %s goes through the proxy', (url, noProxy) => {
    expect(route(url, { HTTPS_PROXY: 'http://p:1', NO_PROXY: noProxy }).reason).toBe('through the proxy http://p:1 (HTTPS_PROXY)');
  });

  test('loopback goes direct unless proxy-loopback or OPCLI_PROXY_LOOPBACK says otherwise; NO_PROXY "*" turns the proxy off', () => {
    for (const url of ['http://127.0.0.1:8080', 'http://localhost', 'http://[::1]:9']) {
      expect(route(url, { HTTP_PROXY: 'http://p:1' }).reason).toMatch(/is loopback; set proxy-loopback to true/);
      expect(route(url, { HTTP_PROXY: 'http://p:1' }, { proxyLoopback: true }).reason).toBe('through the proxy http://p:1 (HTTP_PROXY)');
      expect(route(url, { HTTP_PROXY: 'http://p:1', OPCLI_PROXY_LOOPBACK: '1' }).reason).toBe('through the proxy http://p:1 (HTTP_PROXY)');
    }
    expect(route('https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '*' }).reason).toBe('direct (NO_PROXY is "*")');
    expect(route('https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'api.example.com' }, { noProxy: 'x.test' }).reason).toBe(
      'through the proxy http://p:1 (HTTPS_PROXY)',
    );
  });

  test('entries that can match nothing are warned about and ignored', () => {
    const { warnings } = route('https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'ok.test,10.0.0.0/33,host:99999,https://x,a b' });
    expect(warnings.map((w) => /entry "([^"]+)"/.exec(w)?.[1])).toEqual(['10.0.0.0/33', 'host:99999', 'https://x']);
  });

  test('a proxy password is masked wherever the route is shown', () => {
    expect(route('https://api.example.com', { HTTPS_PROXY: 'http://me:pa%40ss@p:1' }).reason).toBe('through the proxy http://me:***@p:1 (HTTPS_PROXY)');
  });
});
