// Generates types, SDK clients and JSON schemas for both services from the bundled specs.
// Never edit generated/ by hand: `npm run generate` rewrites it, `npm run generate:check`
// fails on any drift. The streaming jobs read a copy of the spec that scripts/bundle-specs.ts
// narrows to createChatCompletion with only text/event-stream, so the SDK gets a typed stream.
import { defineConfig, type UserConfig } from '@hey-api/openapi-ts';

// The fetch runtime that hey-api copies into each client (client/, core/) is written for its
// own compiler flags, not for our exactOptionalPropertyTypes; it is marked @ts-nocheck. The
// files generated from our specs (types, SDK functions, schemas) are type-checked with ours.
const header = (ctx: { file?: unknown; defaultValue: ReadonlyArray<string> }) =>
  ctx.file === undefined ? [...ctx.defaultValue, '// @ts-nocheck'] : [...ctx.defaultValue];

const job = (input: string, output: string): UserConfig => ({
  input,
  output: { path: output, module: { extension: '.ts' }, postProcess: [], header },
  plugins: ['@hey-api/typescript', '@hey-api/schemas', '@hey-api/sdk', '@hey-api/client-fetch'],
});

export default defineConfig([
  job('generated/model/openapi.json', 'generated/model/client'),
  job('generated/model/openapi.stream.json', 'generated/model/stream'),
  job('generated/directory/openapi.json', 'generated/directory/client'),
]);
