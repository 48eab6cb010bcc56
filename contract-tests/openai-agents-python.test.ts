// The OpenAI Agents SDK for Python (pinned in contract-tests/python/requirements.txt, tracing off)
// runs its pytest suite, contract-tests/python/test_openai_agents.py, against the real services on
// both storages: a multi-turn agent with the tool hub at /v1/mcp as its MCP server through both
// model classes, and an OpenAIConversationsSession. Every Python test must pass; none may skip.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureVenv } from './support/python.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

const SUITE = 'contract-tests/python/test_openai_agents.py';

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

describe.each(await storages())('the OpenAI Agents SDK for Python on %s', (storage) => {
  let python: string;
  let servers: TestServers;
  let env: Record<string, string>;
  const report = `test-results/openai-agents-${storage}.xml`;

  beforeAll(async () => {
    python = ensureVenv('.venv-python', 'contract-tests/python/requirements.txt');
    // both services: the hub's tools call the directory with the caller's key
    servers = await startTestServers(storage);
    const [admin] = await servers.platform.db.query<{ account_id: string }>(
      'select account_id from api_keys limit 1',
    );
    const key = await servers.platform.accounts.createKey(admin!.account_id, {
      name: 'agents sdk',
      scopes: ['chat', 'agents', 'search', 'places'],
    });
    env = { EURUS_MODEL_URL: servers.urls.model as string, EURUS_AGENTS_KEY: key.secret };
    mkdirSync('test-results', { recursive: true });
  }, 300_000);
  afterAll(async () => servers?.stop());

  it('runs a multi-turn agent with the hub through both model classes and a conversation session', async () => {
    const { code, output } = await run(
      python,
      ['-m', 'pytest', SUITE, '-q', '-p', 'no:cacheprovider', `--junitxml=${report}`],
      env,
    );
    expect(code, output).toBe(0);
    const xml = readFileSync(report, 'utf8');
    const tests = Number(/<testsuite [^>]*tests="(\d+)"/.exec(xml)?.[1]);
    const skipped = Number(/<testsuite [^>]*skipped="(\d+)"/.exec(xml)?.[1]);
    const defined = readFileSync(SUITE, 'utf8').match(/^def test_/gm)?.length ?? 0;
    expect(tests, output).toBe(defined);
    expect(skipped, output).toBe(0);
  }, 300_000);
});
