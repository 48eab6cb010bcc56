// The agents runtime benchmark (issue 17): steps per second through the real services, and the
// runtime's own overhead per step, model and tool time excluded.
//
// Both services start in this process (PGlite in memory, DEMO_LISTINGS listings, the reference
// engine without a latency profile). Part one drives `POST /v1/responses` with `model: "agents"`
// and the hub's mcp tool through the official openai SDK, at each concurrency: every response is
// two steps (the hub's search, then the answer). Part two runs the same request through the
// runtime in process (no HTTP) and reads each step's timings: a step's duration minus its model
// call and its tool calls is what the runtime itself spent (building the conversation, counting
// its tokens, the events, the bookkeeping). The load shares the machine with the services, so the
// HTTP figures are a floor for what a separate client would see.
// `npm run bench:agents -- [--responses 200] [--concurrency 1,8] [--listings 2000]`
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startInProcess } from './lib.ts';
import OpenAI from 'openai';
import type { CreateResponseRequest, Response } from '../generated/model/client/types.gen.ts';
import { ResponseBuilder } from '../src/agents/events.ts';
import { runResponse, type RunResult } from '../src/agents/runtime.ts';
import { inputItems } from '../src/agents/convert.ts';
import { hubConnector } from '../src/mcp/connector.ts';
import { McpServerStore } from '../src/mcp/registry.ts';
import { createLogger } from '../src/platform/logger.ts';
import { ReferenceEngine } from '../src/model/engines/reference.ts';

const { values: args } = parseArgs({
  options: {
    responses: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '1,8' },
    listings: { type: 'string', default: '2000' },
    out: { type: 'string', default: 'bench/results' },
  },
});
const RESPONSES = Number(args.responses);
const CONCURRENCY = (args.concurrency ?? '1,8').split(',').map(Number);
const KEY = 'sk_bench_agents_0123456789abcdef0123';
const REQUEST: CreateResponseRequest = {
  model: 'agents',
  input: 'Find three bakeries open now near Marienplatz in Munich',
  tools: [{ type: 'mcp', server_label: 'eurus', require_approval: 'never' }],
};

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

async function main(): Promise<void> {
  const running = await startInProcess(['model', 'directory'], KEY, {
    DEMO_LISTINGS: args.listings,
    MODEL_RATE_LIMIT_RPM: '1000000',
    MODEL_RATE_LIMIT_TPM: '1000000000',
    DIRECTORY_RATE_LIMIT_RPS: '100000',
    INBOUND_SMTP_PORT: 'off',
  });
  await running.ready;
  const modelUrl = running.urls.model ?? '';
  const directoryUrl = running.urls.directory ?? '';
  const openai = new OpenAI({ baseURL: `${modelUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  const results: Record<string, unknown> = {};

  // warm-up: tokenizer, search caches, connections
  for (let i = 0; i < 10; i++)
    await openai.responses.create(REQUEST as OpenAI.Responses.ResponseCreateParamsNonStreaming);

  // part one: through HTTP
  const http: unknown[] = [];
  for (const concurrency of CONCURRENCY) {
    const latencies: number[] = [];
    let steps = 0;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < RESPONSES) {
          next++;
          const t = performance.now();
          const response = (await openai.responses.create(
            REQUEST as OpenAI.Responses.ResponseCreateParamsNonStreaming,
          )) as unknown as Response;
          latencies.push(performance.now() - t);
          steps += response.steps?.length ?? 0;
          if (response.status !== 'completed')
            throw new Error(`response ${response.id} ended ${response.status}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const row = {
      concurrency,
      responses: latencies.length,
      steps,
      steps_per_second: round(steps / seconds, 1),
      responses_per_second: round(latencies.length / seconds, 1),
      latency_ms: {
        p50: round(percentile(latencies, 50), 1),
        p95: round(percentile(latencies, 95), 1),
        p99: round(percentile(latencies, 99), 1),
      },
    };
    http.push(row);
    console.log('http', JSON.stringify(row));
  }
  results.http = http;

  // part two: the runtime in process, its own time per step
  const engine = new ReferenceEngine();
  const deps = {
    engineFor: () => engine,
    mcp: hubConnector({
      registry: new McpServerStore(running.platform.db, undefined, false),
      directoryUrl: () => directoryUrl,
      timeoutMs: 15_000,
      allowPrivate: false,
      logger: createLogger('silent', 'bench'),
    }),
    mcpCallTimeoutMs: 15_000,
  };
  const [principal] = await running.platform.db.query<{ account_id: string; project_id: string; id: string }>(
    'select account_id, project_id, id from api_keys limit 1',
  );
  const overheads: number[] = [];
  const modelTimes: number[] = [];
  const toolTimes: number[] = [];
  for (let i = 0; i < RESPONSES; i++) {
    const builder = new ResponseBuilder({
      id: 'resp_00000000000000000000000000',
      object: 'response',
      created_at: 0,
      status: 'in_progress',
      model: 'agents',
      output: [],
      error: null,
      incomplete_details: null,
      instructions: null,
      metadata: null,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: REQUEST.tools ?? [],
      temperature: null,
      top_p: null,
      background: false,
      store: false,
      previous_response_id: null,
      max_output_tokens: null,
      max_tool_calls: null,
      usage: null,
    });
    const result: RunResult = await runResponse(deps, {
      request: REQUEST,
      principal: {
        accountId: principal?.account_id ?? '',
        projectId: principal?.project_id ?? '',
        keyId: principal?.id ?? '',
        scopes: ['agents', 'search', 'places'],
        plan: 'standard',
      },
      bearer: KEY,
      history: inputItems(REQUEST.input),
      builder,
      signal: new AbortController().signal,
    });
    for (const step of result.steps) {
      modelTimes.push(step.modelMs);
      toolTimes.push(step.toolMs);
      overheads.push(Math.max(0, step.stepMs - step.modelMs - step.toolMs));
    }
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  results.runtime = {
    steps: overheads.length,
    overhead_ms_per_step: {
      mean: round(mean(overheads), 3),
      p50: round(percentile(sorted(overheads), 50), 3),
      p95: round(percentile(sorted(overheads), 95), 3),
    },
    model_ms_per_step_mean: round(mean(modelTimes), 3),
    tool_ms_per_step_mean: round(mean(toolTimes), 3),
  };
  console.log('runtime', JSON.stringify(results.runtime));

  const meta = {
    date: new Date().toISOString(),
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    loadavg: loadavg(),
    responses: RESPONSES,
    listings: Number(args.listings),
  };
  mkdirSync(args.out ?? 'bench/results', { recursive: true });
  const file = join(
    args.out ?? 'bench/results',
    `agents-${meta.date.slice(0, 16).replace(/[:T]/g, '-')}.json`,
  );
  writeFileSync(file, `${JSON.stringify({ meta, ...results }, null, 2)}\n`);
  console.log(`wrote ${file}`);
  await running.close();
}

await main();
