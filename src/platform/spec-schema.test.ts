// What express-openapi-validator checked at each start (validateApiSpec), done here once: each
// bundled spec is valid against the OpenAPI schema of its version, by the validator's own check.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { readSpec } from './app.ts';

interface SchemaValidator {
  validate(doc: unknown): { errors: unknown[] };
}
const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const { OpenAPISchemaValidator } = validatorRequire('./framework/openapi.schema.validator') as {
  OpenAPISchemaValidator: new (options: { version: string; validateApiSpec: boolean }) => SchemaValidator;
};

describe.each(['model', 'directory'] as const)('the %s spec', (name) => {
  it('is valid against the OpenAPI schema, as the request validator reads it', () => {
    const spec = readSpec(name) as { openapi: string };
    const validator = new OpenAPISchemaValidator({ version: spec.openapi, validateApiSpec: true });
    expect(validator.validate(spec).errors).toEqual([]);
  });

  it('fails that check when broken (the check can fail)', () => {
    const spec = readSpec(name) as { openapi: string; paths: Record<string, unknown> };
    spec.paths['/v1/broken'] = { get: { responses: 'none' } };
    const validator = new OpenAPISchemaValidator({ version: spec.openapi, validateApiSpec: true });
    expect(validator.validate(spec).errors).not.toEqual([]);
  });
});
