// `npm run contract -- <model|directory> --url <base> --key <admin key> [--model-url <base>]`
// Runs the portable contract suites (contract-tests/portable/) against a deployment through the
// generated SDKs. They create one project of their own, mint scoped keys in it, touch nothing
// else, and revoke their keys at the end. Writes test-results/contract-<api>.xml (JUnit); exits 0
// when every test passed, 1 otherwise. The directory API needs --model-url: keys are minted there.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

const USAGE =
  'usage: npm run contract -- <model|directory> --url <base url> --key <admin key> [--model-url <model API base url>]';

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    key: { type: 'string' },
    'model-url': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const api = positionals[0];
if (api !== 'model' && api !== 'directory')
  fail(`name the API to test: model or directory (got ${api ?? 'nothing'})`);
const url = values.url ?? fail('--url is required');
const key = values.key ?? process.env.CONTRACT_ADMIN_KEY ?? fail('--key is required (an admin key)');
const modelUrl =
  values['model-url'] ??
  (api === 'model'
    ? url
    : fail('the directory API needs --model-url: the suites mint their keys through the model API'));
for (const [name, value] of [
  ['--url', url],
  ['--model-url', modelUrl],
] as const) {
  if (!/^https?:\/\/[^/]+/.test(value)) fail(`${name} must be an http(s) URL, not ${JSON.stringify(value)}`);
}

const report = `test-results/contract-${api}.xml`;
const child = spawn(
  process.execPath,
  [
    'node_modules/vitest/vitest.mjs',
    'run',
    'contract-tests/portable',
    '--reporter=default',
    '--reporter=junit',
    `--outputFile.junit=${report}`,
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      CONTRACT_API: api,
      CONTRACT_BASE_URL: url,
      CONTRACT_MODEL_URL: modelUrl,
      CONTRACT_ADMIN_KEY: key,
    },
  },
);
child.once('exit', (code) => {
  console.log(`\ncontract (${api} at ${url}): ${code === 0 ? 'passed' : 'FAILED'}; JUnit report: ${report}`);
  process.exit(code === 0 ? 0 : 1);
});
