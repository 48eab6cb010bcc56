import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { schemaRefs, skipIdFreeComponents } from './schema-refs.ts';

// the Ajv the validator loads, as the validator makes its schemas: one per response, with the
// spec's components beside it
const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const Ajv2020 = (validatorRequire('ajv/dist/2020') as { default: new (o: object) => AjvLike }).default;
interface AjvLike {
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
}
const wrapped = (components: object) => ({
  type: 'object',
  properties: { response: { $ref: '#/components/schemas/Key' } },
  components,
});

describe('skipIdFreeComponents', () => {
  skipIdFreeComponents();

  it('skips the walk of components without ids, and the schema still validates by them', () => {
    const before = schemaRefs.skipped;
    const components = {
      schemas: {
        Key: { type: 'object', required: ['id'], properties: { id: { $ref: '#/components/schemas/Id' } } },
        Id: { type: 'string', pattern: '^key_' },
      },
    };
    const validate = new Ajv2020({ strict: false }).compile(wrapped(components));
    expect(schemaRefs.skipped).toBe(before + 1);
    expect(validate({ response: { id: 'key_1' } })).toBe(true);
    expect(validate({ response: { id: 'nope' } })).toBe(false);
  });

  it('walks components that hold an $id, so a $ref to it still resolves', () => {
    const before = schemaRefs.skipped;
    const components = {
      schemas: {
        Key: { type: 'object', properties: { id: { $ref: 'https://example.test/id' } } },
        Id: { $id: 'https://example.test/id', type: 'string', pattern: '^key_' },
      },
    };
    const validate = new Ajv2020({ strict: false }).compile(wrapped(components));
    expect(schemaRefs.skipped).toBe(before);
    expect(validate({ response: { id: 'key_1' } })).toBe(true);
    expect(validate({ response: { id: 'nope' } })).toBe(false);
  });

  it("resolves the preprocessor's $refs from what Ajv stored, compiling none of them", () => {
    const { SchemaPreprocessor } = validatorRequire('./middlewares/parsers/schema.preprocessor') as {
      SchemaPreprocessor: new (
        doc: object,
        options: object,
        responses: object,
      ) => { ajv: { schemas: Record<string, { validate?: unknown }> }; preProcess(): unknown };
    };
    const A = { type: 'object', required: ['a'], properties: { a: { type: 'string' } } };
    const json = (schema: object) => ({ content: { 'application/json': { schema } } });
    const doc = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/x': {
          post: {
            requestBody: json({ $ref: '#/components/schemas/A' }),
            responses: { '200': { description: 'ok', ...json({ $ref: '#/components/schemas/A' }) } },
          },
        },
      },
      components: { schemas: { A } },
    };
    const preprocessor = new SchemaPreprocessor(doc, { strict: false, serDesMap: {}, formats: {} }, {});
    preprocessor.preProcess();
    expect(preprocessor.ajv.schemas['#/components/schemas/A']).toBeDefined();
    expect(preprocessor.ajv.schemas['#/components/schemas/A']?.validate).toBeUndefined();
    expect(doc.components.schemas.A).toEqual(A);
  });
});
