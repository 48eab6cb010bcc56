// express-openapi-validator 5.6.2 compiles one Ajv schema per operation's request and per
// response, and each carries the spec's whole `components` so that its `$ref`s resolve
// (openapi.request.validator.js, openapi.response.validator.js buildValidators). Ajv walks every
// node of a schema it is given, looking for `$id`s and anchors (compile/resolve.js,
// getSchemaRefs): the same components walked again for each validator, some 8 of the 27 s of
// CPU of contract-tests/account-data.test.ts. The walk finds nothing in components that hold no
// `$id` (or the Ajv's schemaId) and no `$anchor` or `$dynamicAnchor`: each components object is
// checked once, the same way Ajv walks it, and when it holds none the walk skips it. Ajv is
// loaded once (the instance the validator requires) and core.js reads `getSchemaRefs` from its
// exports at each call, so wrapping that export is enough.
//
// Its preprocessor also looks each `$ref` of the spec up with `ajv.getSchema`, which compiles the
// schema to hand back its source: some 0.15 s of CPU per validator made (three or so per start),
// for validators it then drops. The source is what `addSchema` stored under that key, and is
// read from there when it is; any other `$ref` is looked up as before.
import { createRequire } from 'node:module';

type GetSchemaRefs = (this: { opts: { schemaId?: string } }, schema: unknown, baseId: string) => unknown;
type Traverse = (
  schema: unknown,
  options: { allKeys: boolean },
  visit: (schema: Record<string, unknown>) => void,
) => void;

const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const resolveModule = validatorRequire('ajv/dist/compile/resolve') as { getSchemaRefs: GetSchemaRefs };
interface Preprocessor {
  ajv: { schemas: Record<string, { schema?: unknown } | undefined> };
  resolvedSchemaCache: Map<string, unknown>;
}
const preprocessorModule = validatorRequire('./middlewares/parsers/schema.preprocessor') as {
  SchemaPreprocessor: { prototype: { resolveSchema(this: Preprocessor, schema: unknown): unknown } };
};
const traverse = createRequire(validatorRequire.resolve('ajv'))('json-schema-traverse') as Traverse;

/** How many schemas were walked without their components (tests). */
export const schemaRefs = { skipped: 0 };

let installed = false;

/** Reads the preprocessor's `$ref`s from what Ajv stored, without compiling them, per process. */
function resolveWithoutCompiling(): void {
  const proto = preprocessorModule.SchemaPreprocessor.prototype;
  const resolveSchema = proto.resolveSchema;
  proto.resolveSchema = function (schema) {
    const ref = (schema as { $ref?: unknown } | null)?.$ref;
    if (typeof ref === 'string' && !this.resolvedSchemaCache.has(ref)) {
      const stored = Object.hasOwn(this.ajv.schemas, ref) ? this.ajv.schemas[ref] : undefined;
      // what getSchema(ref).schema is, once compiled
      if (stored && typeof stored === 'object' && stored.schema)
        this.resolvedSchemaCache.set(ref, stored.schema);
    }
    return resolveSchema.call(this, schema);
  };
}

/**
 * Wraps Ajv's getSchemaRefs so that it walks id-free components once, and the preprocessor's
 * `$ref` lookup so that it compiles nothing, per process.
 */
export function skipIdFreeComponents(): void {
  if (installed) return;
  installed = true;
  resolveWithoutCompiling();
  const getSchemaRefs = resolveModule.getSchemaRefs;
  const idFree = new Map<string, WeakMap<object, boolean>>();
  const isIdFree = (components: object, schemaId: string): boolean => {
    let known = idFree.get(schemaId);
    if (!known) idFree.set(schemaId, (known = new WeakMap()));
    let free = known.get(components);
    if (free === undefined) {
      free = true;
      // the walk getSchemaRefs makes (allKeys), testing what it tests at each node
      traverse({ components }, { allKeys: true }, (node) => {
        if (
          typeof node[schemaId] === 'string' ||
          typeof node.$anchor === 'string' ||
          typeof node.$dynamicAnchor === 'string'
        )
          free = false;
      });
      known.set(components, free);
    }
    return free;
  };
  resolveModule.getSchemaRefs = function (schema, baseId) {
    if (schema !== null && typeof schema === 'object' && !Array.isArray(schema)) {
      const { components, ...rest } = schema as Record<string, unknown>;
      if (
        components !== null &&
        typeof components === 'object' &&
        isIdFree(components, this.opts.schemaId ?? '$id')
      ) {
        schemaRefs.skipped++;
        return getSchemaRefs.call(this, rest, baseId);
      }
    }
    return getSchemaRefs.call(this, schema, baseId);
  };
}
