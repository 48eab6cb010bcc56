import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Explainer } from './explain.ts';

interface Spec {
  paths: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
}
const spec = JSON.parse(readFileSync('generated/model/openapi.json', 'utf8')) as Spec &
  Record<string, unknown>;
const create = spec.paths['/v1/responses']!.post.requestBody.content['application/json']!.schema;
const explain = (body: unknown) => new Explainer(spec, 'request').explain(create, body);

describe('Explainer', () => {
  it('names an item type no branch of the union takes, at the item', () => {
    expect(
      explain({
        model: 'queen',
        input: [
          { role: 'user', content: 'x' },
          { type: 'computer_call_output', call_id: 'c', output: {} },
        ],
      }),
    ).toEqual({
      param: 'input[1]',
      message: expect.stringMatching(
        /^item type `computer_call_output` is not supported by this server; supported: message, function_call, /,
      ),
    });
  });

  it('tells the first real mismatch of the branch the tag names, not every branch', () => {
    expect(explain({ model: 'queen', input: [{ role: 'usr', content: 'x' }] })).toEqual({
      param: 'input[0].role',
      message: 'must be one of: `user`, `system`, `developer`, `assistant`',
    });
    expect(
      explain({ model: 'queen', input: [{ type: 'function_call_output', call_id: 'c', output: 5 }] }),
    ).toEqual({
      param: 'input[0].output',
      message: 'must be a string or an array',
    });
    expect(
      explain({ model: 'queen', input: [{ type: 'message', role: 'user', content: 'x', colour: 1 }] }),
    ).toMatchObject({
      param: 'input[0].colour',
      message: expect.stringMatching(/^is not a field of ResponseInputMessage/),
    });
    expect(
      explain({
        model: 'queen',
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x' }] }],
      }),
    ).toMatchObject({
      param: 'input[0].content[0]',
      message: expect.stringMatching(/^content part type `input_image` is not supported/),
    });
  });

  it('finds nothing wrong with a valid body', () => {
    expect(
      explain({ model: 'queen', input: [{ role: 'user', content: 'x' }, { id: 'msg_1' }] }),
    ).toBeUndefined();
  });

  it('reads a response as a response: writeOnly fields may not leave', () => {
    const schema = { type: 'object', properties: { secret: { type: 'string', writeOnly: true } } };
    expect(new Explainer({}, 'response').explain(schema, { secret: 'x' })).toEqual({
      param: 'secret',
      message: 'is write-only and must not be returned',
    });
  });
});
