import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { toApiError } from './error-handler.ts';

describe('toApiError', () => {
  it('answers a malformed multipart body (the validator reports a 500) with a 400', () => {
    const raw = {
      status: 500,
      path: '/v1/unsubscribe/x',
      message: 'Malformed part header',
      errors: [{ path: '/v1/unsubscribe/x', message: 'Malformed part header' }],
    };
    const err = toApiError(raw, { method: 'POST', path: '/v1/unsubscribe/x' } as Request);
    expect(err).toMatchObject({ status: 400, code: 'invalid_multipart' });
  });

  it('keeps a real response validation failure a 500', () => {
    const raw = { status: 500, path: '/v1/x', errors: [{ path: '/response/id', message: 'must be string' }] };
    expect(toApiError(raw, { method: 'GET', path: '/v1/x' } as Request)).toMatchObject({
      status: 500,
      code: 'response_validation_failed',
    });
  });
});
