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

describe('toApiError with the spec', () => {
  const spec = {
    paths: {
      '/v1/things/{id}': {
        get: {
          responses: {
            '200': {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      item: {
                        title: 'ThingItem',
                        oneOf: [
                          {
                            type: 'object',
                            properties: { type: { const: 'a' }, n: { type: 'integer' } },
                            required: ['type'],
                          },
                          {
                            type: 'object',
                            properties: { type: { const: 'b' }, s: { type: 'string' } },
                            required: ['type'],
                          },
                        ],
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
  const req = {
    method: 'GET',
    path: '/v1/things/1',
    openapi: { openApiRoute: '/v1/things/{id}' },
  } as unknown as Request;

  it('tells which field of a response broke the contract, in the branch its tag names', () => {
    const raw = {
      status: 500,
      path: '/v1/things/1',
      errors: [{ path: '/response/item', message: 'must match exactly one schema in oneOf' }],
      responseBody: { item: { type: 'b', s: 5 } },
    };
    const err = toApiError(raw, req, { statusCode: 200, locals: {} } as never, spec);
    expect(err).toMatchObject({ status: 500, code: 'response_validation_failed' });
    expect(err.message).toBe(
      'The server produced a response that breaks its own contract (item.s: must be a string).',
    );
  });
});
