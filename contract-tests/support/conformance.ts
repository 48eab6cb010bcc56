// Checks one response against what the spec documents for its operation and status: the
// status is documented, the body validates against its schema, every required header is there,
// and every documented header that is there has a value its schema allows.
import { expect } from 'vitest';
import { explain, type Operation, responseHeaders, responseValidator } from './spec.ts';

export async function expectConforms(op: Operation, res: Response, status: number): Promise<unknown> {
  const text = await res.text();
  expect(res.status, `${op.operationId}: ${text.slice(0, 400)}`).toBe(status);
  return expectConformsParts(op, status, res.headers, text, res.headers.get('content-type'));
}

export function expectConformsParts(
  op: Operation,
  status: number,
  headers: Headers,
  text: string,
  contentType: string | null,
): unknown {
  const where = `${op.operationId} ${status}`;
  expect(Object.keys(op.responses), `${where} is not documented`).toContain(String(status));
  expect(contentType, where).toMatch(/^application\/json/);
  const body = JSON.parse(text) as { error?: { request_id?: string } };
  const validate = responseValidator(op, String(status));
  expect(validate(body), `${where}: ${explain(validate)}`).toBe(true);
  for (const header of responseHeaders(op, String(status))) {
    const value = headers.get(header.name);
    if (value === null) {
      expect(header.required, `${where}: required header ${header.name} is missing`).toBe(false);
      continue;
    }
    const parsed = header.numeric ? Number(value) : value;
    expect(header.validate(parsed), `${where}: ${header.name}: ${value}: ${explain(header.validate)}`).toBe(
      true,
    );
  }
  if (body.error) expect(headers.get('x-request-id'), where).toBe(body.error.request_id);
  return body;
}
