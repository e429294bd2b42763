/** The identity of claim ids, order numbers and e-mails: every way people vary an id maps to one identity, and distinct ids never meet. */
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { claimIdentity, emailIdentity, idIdentity, orderIdentity, orderLabel } from '../../src/core/identity.js';
import { issuanceKey, sameKey } from '../../src/giftcard/ledger.js';

/** Every dash, hyphen and minus a document or a keyboard may put in an id. */
const DASHES = ['-', '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\uFE58', '\uFE63', '\uFF0D', '\u2E3A', '\u30A0', '\u058A'];
/** White space that a copy and paste adds around or inside an id. */
const SPACES = [' ', '  ', '\t', '\u00A0', '\u3000', '\u2009'];

/** An id in its canonical form: lower-case letters, digits, single dashes and single inner spaces. */
const canonical = fc
  .array(fc.oneof(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split('')), fc.constantFrom('-', ' ')), { minLength: 1, maxLength: 16 })
  .map((chars) => chars.join('').replace(/ +/g, ' ').trim())
  .filter((id) => id.length > 0);

/** One character of an id written the way a person or a document may write it. */
function vary(ch: string, pick: number): string {
  if (ch === '-') return DASHES[pick % DASHES.length] as string;
  if (ch === ' ') return SPACES[pick % SPACES.length] as string;
  if (/[a-z]/.test(ch)) {
    const forms = [
      ch,
      ch.toUpperCase(),
      String.fromCodePoint((ch.toUpperCase().codePointAt(0) as number) + 0xfee0),
      String.fromCodePoint((ch.codePointAt(0) as number) + 0xfee0),
    ];
    return forms[pick % forms.length] as string;
  }
  // A digit, or its full-width form (as a Japanese keyboard types it).
  return pick % 2 ? String.fromCodePoint((ch.codePointAt(0) as number) + 0xfee0) : ch;
}

/** An id and one spelling of it: each character varied, spaces and invisible characters around it. */
const spelling = canonical.chain((id) =>
  fc
    .tuple(
      fc.array(fc.nat(), { minLength: id.length, maxLength: id.length }),
      fc.constantFrom('', ' ', '  ', '\t', '\u200B', '\uFEFF'),
      fc.constantFrom('', ' ', '\n', '\u00A0'),
    )
    .map(([picks, before, after]) => ({ id, written: `${before}${[...id].map((c, i) => vary(c, picks[i] as number)).join('')}${after}` })),
);

describe('identity of ids', () => {
  test('the variants the issue found are one claim', () => {
    for (const v of ['C-2001', 'c-2001', 'C\u20102001', ' C-2001 ', 'C\u22122001', 'Ｃ－２００１', 'C\uFE632001']) expect(claimIdentity(v)).toBe('c-2001');
    expect(orderIdentity('#1003')).toBe(orderIdentity('1003'));
    expect(orderIdentity(' ＃1003')).toBe('1003');
    expect(orderLabel('#1003')).toBe('#1003');
    expect(orderLabel('1003')).toBe('#1003');
    expect(emailIdentity(' Alice@Example.COM ')).toBe(emailIdentity('alice@example.com'));
  });

  test.prop([spelling])('any spelling of an id maps to the identity of its canonical form', ({ id, written }) => {
    expect(claimIdentity(written)).toBe(id);
    expect(orderIdentity(`#${written}`)).toBe(orderIdentity(id));
  });

  test.prop([spelling, spelling])('distinct ids never collide, however each is written', (a, b) => {
    fc.pre(a.id !== b.id);
    expect(claimIdentity(a.written)).not.toBe(claimIdentity(b.written));
    const scope = { shopUrl: 'shop.example', storeId: 'store_1' };
    expect(
      sameKey(
        issuanceKey({ claimId: a.written, orderNumber: '1', bonus: false }, scope),
        issuanceKey({ claimId: b.written, orderNumber: '1', bonus: false }, scope),
      ),
    ).toBe(false);
  });

  test.prop([fc.string({ unit: 'grapheme', maxLength: 24 })])('the identity of an identity is itself, so recorded keys compare the same', (text) => {
    expect(idIdentity(idIdentity(text))).toBe(idIdentity(text));
    expect(orderIdentity(orderIdentity(text))).toBe(orderIdentity(text));
  });

  test('capital sharp s folds as far as sharp s does (a counterexample fast-check found on Node 22)', () => {
    expect(idIdentity('ẞ')).toBe('ss');
    expect(idIdentity('STRAẞE-1')).toBe(idIdentity('strasse-1'));
    expect(idIdentity(idIdentity('ẞ'))).toBe(idIdentity('ẞ'));
  });

  test.prop([spelling])('a claim and a bonus for the same text are different keys; a key as typed and as an identity are the same', ({ id, written }) => {
    const scope = { shopUrl: 'shop.example', storeId: 'store_1' };
    const claim = issuanceKey({ claimId: written, orderNumber: id, bonus: false }, scope);
    const bonus = issuanceKey({ orderNumber: written, bonus: true }, scope);
    expect(sameKey(claim, bonus)).toBe(false);
    // A key written by an older opcli holds the id as typed; it still blocks its identity.
    expect(sameKey(`shop:shop.example|store:store_1|claim:${written}`, issuanceKey({ claimId: id, orderNumber: '1', bonus: false }, scope))).toBe(true);
    expect(sameKey(`claim:${written}`, claim)).toBe(true);
    expect(sameKey(issuanceKey({ claimId: id, orderNumber: '1', bonus: false }, { shopUrl: 'other.example', storeId: 'store_1' }), claim)).toBe(false);
  });
});

/** The rules of src/core/identity.ts applied in full to a fixed point, with no shortcut: the oracle of the plain-ASCII path. */
function foldedInFull(text: string): string {
  const once = (t: string) =>
    t
      .normalize('NFKC')
      .replace(/\p{Cf}/gu, '')
      .replace(/\p{Dash}/gu, '-')
      .toUpperCase()
      .toLowerCase()
      .normalize('NFKC')
      .replace(/\p{Cf}/gu, '')
      .replace(/\p{Dash}/gu, '-')
      .replace(/\s+/gu, ' ')
      .trim();
  let t = text;
  for (let pass = 0; pass < 4 && once(t) !== t; pass++) t = once(t);
  return t;
}

describe('identity of plain ASCII text (its shortcut)', () => {
  /** Printable ASCII and ASCII white space, where the shortcut applies. */
  const ascii = fc.string({
    unit: fc
      .integer({ min: 0x09, max: 0x7e })
      .filter((c) => c <= 0x0d || c >= 0x20)
      .map((c) => String.fromCharCode(c)),
    maxLength: 40,
  });

  test.prop([ascii])('gives what the full rules give', (text) => {
    expect(idIdentity(text)).toBe(foldedInFull(text));
  });

  test('an e-mail, an id with tabs and newlines, and text just outside ASCII fold alike', () => {
    expect(emailIdentity(' Alice.Smith+Claims@Example.COM\r\n')).toBe('alice.smith+claims@example.com');
    expect(idIdentity('C-2001\t\tB\vx')).toBe('c-2001 b x');
    expect(idIdentity('C\u00AD-2001')).toBe(idIdentity('C-2001'));
    expect(idIdentity('Stra\u1E9Ee')).toBe(idIdentity('STRASSE'));
  });
});
