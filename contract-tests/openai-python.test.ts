// The official OpenAI Python SDK (pinned in contract-tests/python/requirements.txt, installed into
// .venv-python/ on first use) runs its pytest suite, contract-tests/python/test_openai_sdk.py,
// against the real model API started here. Every Python test must pass; none may be skipped.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureVenv } from './support/python.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const SUITE = 'contract-tests/python/test_openai_sdk.py';
const REPORT = 'test-results/openai-python.xml';

function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

describe('the official openai Python SDK', () => {
  let python: string;
  let servers: TestServers;
  let env: Record<string, string>;

  beforeAll(async () => {
    python = ensureVenv('.venv-python', 'contract-tests/python/requirements.txt');
    // both services: the responses with the hub's mcp tool call the directory
    servers = await startTestServers('pglite');
    const [admin] = await servers.platform.db.query<{ account_id: string }>(
      'select account_id from api_keys limit 1',
    );
    const mint = (scopes: string[]) =>
      servers.platform.accounts.createKey(admin!.account_id, { name: `python ${scopes.join(' ')}`, scopes });
    env = {
      EURUS_MODEL_URL: servers.urls.model as string,
      EURUS_ADMIN_KEY: servers.adminKey,
      EURUS_SEARCH_ONLY_KEY: (await mint(['search'])).secret,
      EURUS_LIMIT_KEY: (await mint(['chat'])).secret,
    };
    mkdirSync('test-results', { recursive: true });
  }, 300_000);
  afterAll(async () => servers?.stop());

  it('passes its pytest suite: models, chat buffered and streamed, tools, embeddings, error classes, responses, images, audio and realtime', async () => {
    const { code, output } = await run(
      python,
      ['-m', 'pytest', SUITE, '-q', '-p', 'no:cacheprovider', `--junitxml=${REPORT}`],
      env,
    );
    expect(code, output).toBe(0);
    const report = readFileSync(REPORT, 'utf8');
    const tests = Number(/<testsuite [^>]*tests="(\d+)"/.exec(report)?.[1]);
    const skipped = Number(/<testsuite [^>]*skipped="(\d+)"/.exec(report)?.[1]);
    const defined = readFileSync(SUITE, 'utf8').match(/^def test_/gm)?.length ?? 0;
    expect(tests, output).toBe(defined);
    expect(skipped, output).toBe(0);
  }, 300_000);
});
