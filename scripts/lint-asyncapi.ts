// Lints the AsyncAPI 3 documents beside the OpenAPI ones (the realtime voice stream) with the
// AsyncAPI initiative's own parser and its Spectral rules, offline; any error or warning fails.
import { readFileSync } from 'node:fs';
import { Parser } from '@asyncapi/parser';

const DOCUMENTS = process.argv.length > 2 ? process.argv.slice(2) : ['spec/model/realtime.asyncapi.yaml'];
// severity 0 error, 1 warning, 2 info, 3 hint
const FAIL_AT = 1;

const parser = new Parser();
let failed = false;
for (const file of DOCUMENTS) {
  const { document, diagnostics } = await parser.parse(readFileSync(file, 'utf8'), { source: file });
  const serious = diagnostics.filter((d) => d.severity <= FAIL_AT);
  for (const d of diagnostics) {
    const where = d.path.length > 0 ? d.path.join('.') : '(document)';
    const level = ['error', 'warning', 'info', 'hint'][d.severity] ?? 'note';
    console.log(`${file}: ${level} ${d.code} at ${where}: ${d.message}`);
  }
  if (document === undefined || serious.length > 0) failed = true;
  else
    console.log(`${file}: valid AsyncAPI ${document.version()} (${document.allMessages().length} messages)`);
}
process.exit(failed ? 1 : 0);
