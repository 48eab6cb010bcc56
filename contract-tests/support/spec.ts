// Reads the bundled specs and validates values against their schemas (JSON Schema 2020-12,
// as OpenAPI 3.1 writes them). The server validator does not check SSE streams; we do, here.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export type Api = 'model' | 'directory';
type Json = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  example?: unknown;
  schema?: Json;
}

export interface Operation {
  api: Api;
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  requestBody?: {
    content: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }>;
  };
  responses: Record<string, { content?: Record<string, { schema?: Json; example?: unknown }> }>;
  security?: Array<Record<string, string[]>>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const cache = new Map<Api, { spec: Json; ajv: Ajv2020 }>();

export function loadSpec(api: Api): Json {
  return load(api).spec;
}

function load(api: Api) {
  let entry = cache.get(api);
  if (!entry) {
    const spec = JSON.parse(readFileSync(`generated/${api}/openapi.json`, 'utf8')) as Json;
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    ajv.addSchema(spec, `${api}.json`);
    entry = { spec, ajv };
    cache.set(api, entry);
  }
  return entry;
}

function resolveRef<T>(spec: Json, value: T): T {
  const ref = (value as { $ref?: string } | undefined)?.$ref;
  if (!ref) return value;
  const target = ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node as Json)[key], spec);
  return resolveRef(spec, target as T);
}

export function operations(api: Api): Operation[] {
  const spec = loadSpec(api);
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(spec.paths as Record<string, Json>)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const params = [...((item.parameters as Json[]) ?? []), ...((op.parameters as Json[]) ?? [])].map(
        (p) => resolveRef(spec, p) as unknown as Parameter,
      );
      const responses = Object.fromEntries(
        Object.entries(op.responses as Json).map(([status, r]) => [status, resolveRef(spec, r)]),
      ) as Operation['responses'];
      const requestBody = op.requestBody
        ? (resolveRef(spec, op.requestBody) as Operation['requestBody'])
        : undefined;
      out.push({
        api,
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        parameters: params,
        responses,
        ...(requestBody ? { requestBody } : {}),
        ...(op.security ? { security: op.security as NonNullable<Operation['security']> } : {}),
      });
    }
  }
  return out;
}

export function exampleOf(
  media: { example?: unknown; examples?: Record<string, { value: unknown }> } | undefined,
): unknown {
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const first = Object.values(media.examples ?? {})[0];
  return first?.value;
}

export function paramExample(api: Api, param: Parameter): unknown {
  if (param.example !== undefined) return param.example;
  const schema = resolveRef(loadSpec(api), param.schema) as Json | undefined;
  if (schema?.default !== undefined) return schema.default;
  const examples = schema?.examples as unknown[] | undefined;
  if (examples?.length) return examples[0];
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  return undefined;
}

/** A validator for the schema at a JSON pointer of the bundled spec. */
export function validatorAt(api: Api, pointer: string): ValidateFunction {
  const { ajv } = load(api);
  const id = `${api}.json#${pointer}`;
  const existing = ajv.getSchema(id);
  if (existing) return existing;
  throw new Error(`no schema at ${id}`);
}

export function componentValidator(api: Api, name: string): ValidateFunction {
  return validatorAt(api, `/components/schemas/${name}`);
}

export function responseValidator(
  op: Operation,
  status: string,
  mediaType = 'application/json',
): ValidateFunction {
  const escaped = op.path.replace(/~/g, '~0').replace(/\//g, '~1');
  const media = mediaType.replace(/~/g, '~0').replace(/\//g, '~1');
  const ptr = `/paths/${escaped}/${op.method.toLowerCase()}/responses/${status}`;
  const spec = loadSpec(op.api);
  const response = (((spec.paths as Json)[op.path] as Json)[op.method.toLowerCase()] as Json)
    .responses as Json;
  const ref = (response[status] as { $ref?: string }).$ref;
  const base = ref ? ref.slice(1) : ptr;
  return validatorAt(op.api, `${base}/content/${media}/schema`);
}

export interface HeaderSpec {
  name: string;
  required: boolean;
  /** Validates the header's value (numbers parsed first when the schema wants a number). */
  validate: ValidateFunction;
  numeric: boolean;
}

/** The headers the spec documents for a response of an operation. */
export function responseHeaders(op: Operation, status: string): HeaderSpec[] {
  const spec = loadSpec(op.api);
  const escaped = op.path.replace(/~/g, '~0').replace(/\//g, '~1');
  const response = (((spec.paths as Json)[op.path] as Json)[op.method.toLowerCase()] as Json)
    .responses as Json;
  const ref = (response[status] as { $ref?: string } | undefined)?.$ref;
  const base = ref ? ref.slice(1) : `/paths/${escaped}/${op.method.toLowerCase()}/responses/${status}`;
  const resolved = resolveRef(spec, response[status]) as { headers?: Record<string, Json> } | undefined;
  return Object.entries(resolved?.headers ?? {}).map(([name, header]) => {
    const headerRef = (header as { $ref?: string }).$ref;
    const pointer = headerRef ? `${headerRef.slice(1)}/schema` : `${base}/headers/${name}/schema`;
    const resolvedHeader = resolveRef(spec, header) as { required?: boolean; schema?: Json };
    const schema = resolveRef(spec, resolvedHeader.schema);
    const type = schema?.type;
    return {
      name,
      required: resolvedHeader.required === true,
      validate: validatorAt(op.api, pointer),
      numeric: type === 'integer' || type === 'number',
    };
  });
}

export function explain(validate: ValidateFunction): string {
  return JSON.stringify(validate.errors?.slice(0, 5) ?? [], null, 2);
}
