// `npm ci` (postinstall) and `node scripts/pglite-template.ts`: makes the installed PGlite's
// fresh cluster once (src/platform/pglite-template.ts), so a first start and every test that opens
// PGlite copy it instead of running initdb. Never fails an install: without it initdb runs.
import { existsSync } from 'node:fs';
import { makeTemplate, templateFile } from '../src/platform/pglite-template.ts';

try {
  const file = templateFile();
  if (existsSync(file) && !process.argv.includes('--force')) console.log(`PGlite template: ${file}`);
  else console.log(`PGlite template made: ${await makeTemplate(file)}`);
} catch (err) {
  console.warn(`PGlite template not made (new databases run initdb): ${(err as Error).message}`);
}
