/**
 * Values that are wrong in exactly one way, by what a flag or argument holds. Each class is a
 * fast-check arbitrary, so every run draws new members and a failure shrinks and replays by seed.
 */
import fc from 'fast-check';

/** What a flag's value is, as far as knowing what is wrong with it goes. */
export type ValueKind =
  | 'text'
  | 'count'
  | 'amount'
  | 'signed'
  | 'latitude'
  | 'longitude'
  | 'duration'
  | 'datetime'
  | 'iso-duration'
  | 'email'
  | 'url'
  | 'enum'
  | 'uuid'
  | 'input-file'
  | 'output-file'
  | 'profile-name'
  | 'query'
  | 'id'
  | 'session-token'
  | 'http-method'
  | 'api-path'
  | 'config-key';

/**
 * The kind of every value flag that is more than free text, by long name (a name means one thing
 * across commands). A flag not listed is text: it still gets the classes every value gets.
 */
export const FLAG_KINDS: Record<string, ValueKind> = {
  '--size': 'count',
  '--page-buttons': 'count',
  '--limit': 'count',
  '--concurrency': 'count',
  '--port': 'count',
  '--orders': 'count',
  '--inventory-quantity': 'count',
  '--premium-paid': 'amount',
  '--total': 'amount',
  '--shipping-cost': 'amount',
  '--subtotal': 'amount',
  '--shipping-cost-tax': 'amount',
  '--price': 'amount',
  '--item-price': 'amount',
  '--amount': 'amount',
  '--discount-total': 'signed',
  '--shipping-lat': 'latitude',
  '--shipping-lng': 'longitude',
  '--timeout': 'duration',
  '--trigger-wait': 'duration',
  '--late-check': 'duration',
  '--token-ttl': 'duration',
  '--trigger-delay': 'duration',
  '--policy-cancelled-at': 'datetime',
  '--source-created-at': 'datetime',
  '--source-updated-at': 'datetime',
  '--source-cancelled-at': 'datetime',
  '--warranty-date-of-purchase': 'datetime',
  '--warranty-period': 'iso-duration',
  '--customer-email': 'email',
  '--email': 'email',
  '--api-url': 'url',
  '--trigger-url': 'url',
  '--native-url': 'url',
  '--item-image': 'url',
  '--item-product-image': 'url',
  '--warranty-receipt-image': 'url',
  '--signature': 'url',
  '--product-image': 'url',
  '--currency': 'enum',
  '--status': 'enum',
  '--product-type': 'enum',
  '--inventory-type': 'enum',
  '--sales-channel': 'enum',
  '--claim-category': 'enum',
  '--issue-type': 'enum',
  '--resolution': 'enum',
  '--claim-filed-from': 'enum',
  '--format': 'enum',
  '--trigger-id': 'uuid',
  '--data': 'input-file',
  '--from': 'input-file',
  '--from-file': 'input-file',
  '--token-from-file': 'input-file',
  '--journal': 'output-file',
  '--out': 'output-file',
  '--write-profile': 'profile-name',
  '--profile': 'profile-name',
  '--query': 'query',
};

/** A class of wrong values (named for counting and for KNOWN_OPEN) and what draws its members. */
export interface Wrong {
  cls: string;
  arb: fc.Arbitrary<string>;
}

const wrong = (cls: string, arb: fc.Arbitrary<string>): Wrong => ({ cls, arb });

/** A short printable word, for splicing a fault into. */
const word = fc.stringMatching(/^[A-Za-z0-9]{1,8}$/);

/** C0 controls (but tab and newline), DEL and C1 controls: never part of a flag value a person meant. */
const controlChar = fc.constantFrom('\x00', '\x07', '\x08', '\x1b', '\x1b[2J', '\x7f', '\x9b', '\r');

/** Every value flag and argument: empty, blank, control characters, invalid UTF-8 (decoded as U+FFFD). */
export function universal(): Wrong[] {
  return [
    wrong('empty', fc.constant('')),
    wrong('blank', fc.constantFrom(' ', '   ', '\t')),
    wrong(
      'control',
      fc.tuple(word, controlChar, word).map(([a, c, b]) => `${a}${c}${b}`),
    ),
    // Node decodes bytes that are not UTF-8 in argv as U+FFFD: that is what such a value looks like.
    wrong(
      'invalid-utf8',
      fc.tuple(word, word).map(([a, b]) => `${a}\uFFFD${b}`),
    ),
  ];
}

/** Not a number at all, a number in exponent notation, hex, a comma decimal, too long to be exact. */
const notANumber = [
  wrong('not-a-number', fc.constantFrom('abc', 'NaN', 'Infinity', '-Infinity', '1,5', '12.5.1', '0x1F', '1_000', '١٢')),
  wrong(
    'exponent',
    fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 30 })).map(([m, e]) => `${m}e${e}`),
  ),
  wrong(
    'huge',
    fc.integer({ min: 330, max: 400 }).map((n) => '9'.repeat(n)),
  ),
];

/** The wrong values of a flag or argument of `kind`, beyond the universal ones. */
export function byKind(kind: ValueKind): Wrong[] {
  switch (kind) {
    case 'count':
      return [
        ...notANumber,
        wrong(
          'negative',
          fc.integer({ min: 1, max: 1000 }).map((n) => `-${n}`),
        ),
        wrong(
          'fraction',
          fc.integer({ min: 1, max: 99 }).map((n) => `1.${n}`),
        ),
      ];
    case 'amount':
      return [
        ...notANumber,
        wrong(
          'negative',
          fc.integer({ min: 1, max: 100_000 }).map((n) => `-${n / 100}`),
        ),
      ];
    case 'signed':
      return notANumber;
    case 'latitude':
      return [...notANumber, wrong('out-of-range', fc.oneof(fc.integer({ min: 91, max: 1000 }), fc.integer({ min: -1000, max: -91 })).map(String))];
    case 'longitude':
      return [...notANumber, wrong('out-of-range', fc.oneof(fc.integer({ min: 181, max: 1000 }), fc.integer({ min: -1000, max: -181 })).map(String))];
    case 'duration':
      return [
        wrong('bare-number', fc.integer({ min: 1, max: 999 }).map(String)),
        wrong('not-a-duration', fc.constantFrom('soon', '5 minutes', '1e3s', '-5s', '5x')),
      ];
    case 'datetime':
      return [
        wrong('date-that-does-not-exist', fc.constantFrom('2023-02-29T10:00:00Z', '2024-04-31T00:00:00Z', '2024-13-01T00:00:00Z', '2024-05-01T25:00:00Z')),
        // A date alone (2024-05-01) is a claim's date-time at noon UTC (docs/spec-choices.md#dates-without-a-time): not wrong everywhere.
        wrong('no-zone', fc.constantFrom('2024-05-01T10:00:00', '2024-05-01 10:00', '05/01/2024', 'yesterday')),
      ];
    case 'iso-duration':
      return [wrong('not-an-iso-duration', fc.constantFrom('P', '1Y', '1 year', 'P1.5X', '-P1Y', 'PT'))];
    case 'email':
      return [wrong('not-an-email', fc.constantFrom('alice', 'alice@', '@example.com', 'a b@example.com', 'alice@@example.com'))];
    case 'url':
      return [wrong('not-a-url', fc.constantFrom('not a url', 'javascript:alert(1)', 'example.com/x.png', 'file:///etc/passwd', 'http://'))];
    case 'enum':
      return [wrong('not-listed', fc.constantFrom('NOPE', 'ZZZ', 'active-ish'))];
    case 'uuid':
      return [wrong('not-a-uuid', fc.constantFrom('not-a-uuid', '1234', 'https://example.com/trigger/0f8fad5b'))];
    case 'input-file':
      return [wrong('path', fc.constantFrom('@folder', '@dangling-symlink', '@missing', '@symlink-loop'))];
    case 'output-file':
      return [wrong('path', fc.constantFrom('@folder', '@in-missing-folder'))];
    case 'profile-name':
      return [wrong('bad-name', fc.constantFrom('../../etc/x', 'a/b', '.hidden', 'x'.repeat(65), 'has space'))];
    case 'query':
      return [wrong('not-key-value', fc.constantFrom('novalue', '=v'))];
    case 'id':
      // `.` and `..` are resolved away in a URL path (`/v2/products/../children` is `/v2/children`);
      // other odd characters are percent-encoded and reach the right endpoint, so they are not wrong.
      return [wrong('dot-segment', fc.constantFrom('.', '..'))];
    case 'session-token':
      return [wrong('not-a-jwt', fc.constantFrom('not-a-jwt', 'a.b', 'a b.c d.e f'))];
    case 'http-method':
      return [wrong('not-a-method', fc.constantFrom('FETCH', 'G3T', 'get me'))];
    case 'api-path':
      return [wrong('other-host', fc.constantFrom('https://evil.example/v1/orders', '//evil.example/v1/orders', 'v1 orders'))];
    case 'config-key':
      return [wrong('unknown-key', fc.constantFrom('no-such-key', 'base_urll', 'profiles.default.base-url'))];
    default:
      return [];
  }
}
