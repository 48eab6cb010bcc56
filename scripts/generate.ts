// Turns the hand-written specs into everything derived from them:
//   generated/{model,directory}/openapi.json   bundled specs (served at /openapi.json, fed to the validator)
//   generated/model/openapi.stream.json        createChatCompletion narrowed to its SSE stream
//   generated/*/client, generated/model/stream  types, SDKs and JSON schemas (@hey-api/openapi-ts)
//   docs/reference/{model,directory}.html      self-contained reference pages (Redoc, inlined)
//   generated/console/app.js                     the console's browser bundle (scripts/build-console.ts)
// `npm run generate` writes them; `npm run generate:check` fails when the committed copies differ.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const APIS = ['model', 'directory'] as const;

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
}

type Json = Record<string, unknown>;

// The SDK generator reads only application/json when a 200 also offers text/event-stream.
// A second job gets a copy where the stream is the only content and each event's data is
// the chunk schema, so the generated SDK yields typed ChatCompletionChunk values.
function streamVariant(spec: Json): Json {
  const copy = structuredClone(spec) as Json & { paths: Record<string, Record<string, Json>> };
  const op = copy.paths['/v1/chat/completions']?.post as
    | { responses: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown }> }> }
    | undefined;
  if (!op) throw new Error('POST /v1/chat/completions is missing from the model spec');
  const ok = op.responses['200'];
  const sse = ok?.content?.['text/event-stream'];
  if (!ok?.content || !sse) throw new Error('createChatCompletion has no text/event-stream 200');
  ok.content = {
    'text/event-stream': { schema: { $ref: '#/components/schemas/ChatCompletionChunk' } },
  };
  copy.paths = { '/v1/chat/completions': { post: op as Json } };
  return copy;
}

for (const api of APIS) {
  mkdirSync(`generated/${api}`, { recursive: true });
  run('redocly', ['bundle', `${api}@v1`, '--ext', 'json', '-o', `generated/${api}/openapi.json`]);
}
const model = JSON.parse(readFileSync('generated/model/openapi.json', 'utf8')) as Json;
writeFileSync('generated/model/openapi.stream.json', `${JSON.stringify(streamVariant(model), null, 2)}\n`);

for (const dir of ['generated/model/client', 'generated/model/stream', 'generated/directory/client']) {
  rmSync(dir, { recursive: true, force: true });
}
run('openapi-ts', []);

// Redoc's attribution logo is the one thing the page would still fetch from a CDN; it is
// inlined as a data: URI so the page renders with no network at all.
const LOGO = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="90" height="16"><text x="0" y="12" font-family="sans-serif" font-size="12" fill="#888">Redocly</text></svg>',
)}`;

mkdirSync('docs/reference', { recursive: true });
for (const api of APIS) {
  const out = `docs/reference/${api}.html`;
  run('redocly', ['build-docs', `generated/${api}/openapi.json`, '--inlineBundle', '-o', out]);
  const html = readFileSync(out, 'utf8').replace(
    /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g,
    LOGO,
  );
  writeFileSync(out, html);
}

// The console's browser code is built on the model SDK just generated.
run('node', ['scripts/build-console.ts']);
