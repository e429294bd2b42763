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
