// docs/agents.md's "twenty lines of the official SDK", run as printed (only the address changed
// to the test's server) with a key of the scopes the guide names: the agent on model "agents"
// calls the hub's search tool with arguments from the request's words, answers from its result,
// and prints its steps and their cost, which GET /v1/usage then reports to the nano-EUR.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, until } from './support/client.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const GUIDE = readFileSync('docs/agents.md', 'utf8');

/** The ```js block under the guide's section 2. */
function agentProgram(): string {
  const at = GUIDE.indexOf('## 2. The agent: twenty lines of the official SDK');
  const start = GUIDE.indexOf('```js\n', at) + '```js\n'.length;
  return GUIDE.slice(start, GUIDE.indexOf('\n```', start) + 1);
}

describe('docs/agents.md, run as a newcomer runs it', () => {
  // beside node_modules, so `import OpenAI from 'openai'` resolves
  const dir = join('.tmp', `agents-guide-${process.pid}`);
  let servers: TestServers;
  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    servers = await startTestServers('pglite');
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is about twenty lines, and the agent finds bakeries with the hub, its steps billed as printed', async () => {
    const program = agentProgram();
    const lines = program.trim().split('\n').length;
    expect(lines).toBeGreaterThanOrEqual(15);
    expect(lines).toBeLessThanOrEqual(25);
    expect(program).toContain("baseURL: 'http://localhost:8080/v1'");
    const file = join(dir, 'agent.mjs');
    writeFileSync(file, program.replace('http://localhost:8080/v1', `${servers.urls.model}/v1`));

    // step 1 of the guide: a key with the scopes agents, search and places
    const minted = await fetch(`${servers.urls.model}/v1/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'agent', scopes: ['agents', 'search', 'places'] }),
    });
    expect(minted.status).toBe(201);
    const key = ((await minted.json()) as { secret: string }).secret;

    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      env: { ...process.env, EURUS_API_KEY: key },
      timeout: 60_000,
    });
    const lines_ = stdout.trim().split('\n');
    const called = /^called search_directory (\{.*\})$/.exec(lines_[0] ?? '');
    expect(called, stdout).not.toBeNull();
    const args = JSON.parse(called![1]!) as Record<string, unknown>;
    expect(String(args.query)).toMatch(/bakeries/i);
    expect(String(args.near ?? args.city)).toMatch(/Munich|Marienplatz/);
    expect(args.open_now).toBeUndefined(); // the guide asks for no opening hours: its output holds all day
    expect(lines_[1]).toMatch(/eurus__search_directory/); // the answer uses the tool's result
    const steps = lines_.filter((l) => l.startsWith('step '));
    expect(steps[0]).toMatch(/^step 0: queen, 1 tool call\(s\), \d+ ms, 0\.04\d{7} EUR$/);
    expect(steps.at(-1)).toMatch(/^step \d+: queen, 0 tool call\(s\), \d+ ms, 0\.04\d{7} EUR$/);
    const total = /^total (\d+\.\d{9}) EUR for (\d+) steps$/.exec(lines_.at(-1) ?? '');
    expect(total, stdout).not.toBeNull();
    expect(Number(total![2])).toBe(steps.length);

    // usage shows the steps and their cost, on the key's account, to the nano-EUR
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const usage = `/v1/usage?from=${today}&to=${tomorrow}&group_by=model`;
    type Bucket = { results: Array<{ model: string | null; steps: number; cost: string }> };
    const agents = await until('the steps on the usage', async () => {
      const report = await call(servers.urls.model!, servers.adminKey, 'GET', usage);
      const found = (report.data as Bucket[]).flatMap((b) => b.results).find((r) => r.model === 'agents');
      return found?.steps === steps.length ? found : undefined;
    });
    expect(agents).toMatchObject({ steps: steps.length, cost: total![1] });
  });
});
