/**
 * NO_PROXY's IP addresses and CIDR ranges (src/http/client.ts), as properties over random addresses:
 * an IPv4 range holds exactly the addresses whose first `prefix` bits are its own (checked against
 * arithmetic on the 32-bit numbers), and an IPv6 address matches itself however either side writes it.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { readProxyConfig, routeFor } from '../../src/http/client.js';

function reason(url: string, noProxy: string): string {
  const config = readProxyConfig({}, { HTTPS_PROXY: 'http://p:1', NO_PROXY: noProxy }, () => {});
  return routeFor(config, new URL(url)).reason;
}

const PROXIED = 'through the proxy http://p:1 (HTTPS_PROXY)';
const ipv4 = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 });
/** A host the loopback rule leaves alone (127.0.0.0/8 goes direct before NO_PROXY is asked). */
const ipv4Host = ipv4.filter((bytes) => bytes[0] !== 127);
const asNumber = (bytes: number[]) => bytes.reduce((n, b) => n * 256 + b, 0);
/** Eight groups of 16 bits, with how the entry and the host write them. */
const ipv6 = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
  // Neither it nor the address after it is ::1, which the loopback rule sends direct first.
  .filter((groups) => groups.slice(0, 7).some((g) => g !== 0) || (groups[7] ?? 0) > 1);
const fullForm = (groups: number[]) => groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
/** The shortest form, as URL.hostname gives it (`::` for the longest run of zeros). */
const shortForm = (groups: number[]) => new URL(`http://[${groups.map((g) => g.toString(16)).join(':')}]`).hostname.slice(1, -1);

describe('NO_PROXY addresses', () => {
  test.prop([ipv4, ipv4Host, fc.integer({ min: 0, max: 32 })])('an IPv4 range holds the addresses that share its first prefix bits', (range, host, prefix) => {
    const entry = `${range.join('.')}/${prefix}`;
    const block = 2 ** (32 - prefix);
    const inside = Math.floor(asNumber(range) / block) === Math.floor(asNumber(host) / block);
    expect(reason(`https://${host.join('.')}:8443`, `other.test,${entry}`)).toBe(inside ? `direct (NO_PROXY matched "${entry}")` : PROXIED);
  });

  test.prop([ipv6, fc.boolean()])('an IPv6 address matches itself in any spelling, and no other address', (groups, bracketed) => {
    const entry = bracketed ? `[${fullForm(groups)}]` : fullForm(groups);
    expect(reason(`https://[${shortForm(groups)}]`, entry)).toBe(`direct (NO_PROXY matched "${entry}")`);
    const other = groups.map((g, i) => (i === 7 ? (g + 1) % 0x10000 : g));
    expect(reason(`https://[${shortForm(other)}]`, entry)).toBe(PROXIED);
  });
});
