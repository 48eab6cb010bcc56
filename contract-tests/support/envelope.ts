// What every error response promises (docs/errors.md): the envelope, validated against the spec's
// ErrorResponse schema, JSON, and an x-request-id equal to the body's request_id.
import { expect } from 'vitest';
import { type Api, componentValidator, explain } from './spec.ts';

export interface ErrorBody {
  type: string;
  code: string;
  message: string;
  param: string | null;
  request_id: string;
}

export async function expectError(
  api: Api,
  res: Response,
  status: number,
  type: string,
  code?: string,
): Promise<ErrorBody> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as { error: ErrorBody };
  const validate = componentValidator(api, 'ErrorResponse');
  expect(validate(body), explain(validate)).toBe(true);
  expect(body.error.type).toBe(type);
  if (code) expect(body.error.code).toBe(code);
  expect(res.headers.get('x-request-id')).toBe(body.error.request_id);
  return body.error;
}

export function bearer(secret: string): Record<string, string> {
  return { authorization: `Bearer ${secret}` };
}
