// Validates values against the bundled Model API spec's component schemas with Ajv (JSON Schema 2020-12).
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const SPEC_URL = new URL('../../../generated/model/openapi.json', import.meta.url);
const SPEC_ID = 'https://spec.local/model/openapi.json';

let ajv: Ajv2020 | undefined;

/** A fresh Ajv 2020 with the formats of ajv-formats, OpenAPI's int64, and OpenAPI keywords allowed. */
export function newAjv(): Ajv2020 {
  const instance = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(instance);
  instance.addFormat('int64', true);
  instance.addFormat('int32', true);
  instance.addFormat('binary', true);
  return instance;
}

function specAjv(): Ajv2020 {
  if (ajv === undefined) {
    ajv = newAjv();
    const spec = JSON.parse(readFileSync(SPEC_URL, 'utf8')) as Record<string, unknown>;
    ajv.addSchema({ ...spec, $id: SPEC_ID });
  }
  return ajv;
}

/** The validator of `#/components/schemas/<name>` of the model spec. */
export function specValidator(name: string): ValidateFunction {
  const validate = specAjv().getSchema(`${SPEC_ID}#/components/schemas/${name}`);
  if (validate === undefined) throw new Error(`no schema ${name} in the model spec`);
  return validate;
}

/** The Ajv errors of `value` against the spec schema `name`, as a string; '' when valid. */
export function specErrors(name: string, value: unknown): string {
  const validate = specValidator(name);
  return validate(value) ? '' : specAjv().errorsText(validate.errors);
}
