import { describe, expect, test } from 'vitest';
import { bodySays, readErrorBody } from '../../src/http/error-body.js';

describe('readErrorBody: every shape a real API answers in', () => {
  test.each([
    ['{message}', { message: 'Store domain not found' }],
    ['{error: string}', { error: 'Store domain not found' }],
    ['{error: object}', { error: { message: 'Store domain not found', code: 'E404' } }],
    ['{error_description}', { error: 'not_found', error_description: 'Store domain not found' }],
    ['{errors: [string]}', { errors: ['Store domain not found'] }],
    ['{errors: [{message}]}', { errors: [{ message: 'Store domain not found' }] }],
    ['{reason}', { status: 'error', reason: 'Store domain not found' }],
    ['{message, reason}', { message: 'Not Found', reason: 'Store domain not found' }],
    ['plain text', 'Store domain not found'],
    ['HTML', '<!doctype html><html><head><title>404</title></head><body><h1>Error</h1><p>Store domain not found</p></body></html>'],
    ['a bare array', ['Store domain not found']],
  ])('%s', (_shape, body) => {
    const info = readErrorBody(body);
    expect(bodySays(info, 'store domain NOT FOUND')).toBe(true);
    expect(info.message).toBeTruthy();
  });

  test('an HTML page is one line: the title once, what else the body says, no server signature', () => {
    const nginx =
      '<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n';
    expect(readErrorBody(nginx).message).toBe('503 Service Temporarily Unavailable');
    const generic = '<!doctype html><html><head><title>Error 404</title></head><body><h1>Error 404</h1><p>trigger not found</p></body></html>';
    expect(readErrorBody(generic).message).toBe('Error 404: trigger not found');
    expect(readErrorBody('<html><body><h1>Oops</h1><p>the store is closed</p></body></html>').message).toBe('Oops the store is closed');
  });

  test('OAuth codes are codes, sentences are messages', () => {
    expect(readErrorBody({ error: 'invalid_grant', error_description: 'refresh token reused' })).toMatchObject({
      code: 'invalid_grant',
      message: 'refresh token reused',
    });
    expect(readErrorBody({ error: 'API key not found' })).toMatchObject({ code: undefined, message: 'API key not found' });
  });

  test('field errors keep their paths', () => {
    const info = readErrorBody({
      message: 'invalid',
      errors: [
        { path: 'customer.email', message: 'not an e-mail' },
        { field: 'price', message: 'must be >= 0' },
      ],
    });
    expect(info.fieldErrors).toEqual([
      { path: 'customer.email', message: 'not an e-mail' },
      { path: 'price', message: 'must be >= 0' },
    ]);
    expect(info.message).toBe('invalid');
  });

  test('nothing to read is nothing', () => {
    expect(readErrorBody(undefined)).toEqual({ fieldErrors: [], texts: [] });
    expect(readErrorBody({})).toMatchObject({ message: undefined, texts: [] });
    expect(bodySays(readErrorBody({ other: 'Store domain not found' }), 'store domain not found')).toBe(false);
  });

  test('a huge body is clipped', () => {
    expect(readErrorBody('x'.repeat(10_000)).message?.length).toBeLessThanOrEqual(501);
  });
});

describe('a hostile error body stays readable', () => {
  test('ten thousand field errors: at most 100 read, each message cut at 500 characters', () => {
    const info = readErrorBody({ errors: Array.from({ length: 10_000 }, (_, i) => ({ path: `f${i}`, message: 'm'.repeat(10_000) })) });
    expect(info.fieldErrors).toHaveLength(100);
    for (const e of info.fieldErrors) expect(e.message.length).toBeLessThanOrEqual(501);
  });

  test('on stderr: the message is cut at 2,000 characters, so a few kilobytes', async () => {
    const { runAgainst } = await import('../orders/scripted.js');
    const body = { message: 'x'.repeat(100_000), errors: Array.from({ length: 10_000 }, (_, i) => ({ path: `f${i}`, message: `bad ${'y'.repeat(1_000)}` })) };
    const r = await runAgainst([{ status: 422, body }], ['orders', 'update', 'ord_x', '--replace', '--source-order-number', '#1', '--currency', 'USD']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Error: PUT \/v1\/orders\/ord_x was refused \(422\): x+…$/m);
    expect(r.stderr.length).toBeLessThan(4_096);
  });
});
