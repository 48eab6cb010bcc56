// The runtime's bounds, which the reference engine never reaches (it answers once it has a tool
// result): a model that asks for a tool call on every turn. The engine and the MCP server here
// are scripted for that one purpose.
import { describe, expect, it } from 'vitest';
import type { CreateResponseRequest, Response } from '../../generated/model/client/types.gen.ts';
import type { Engine, EngineEvent } from '../model/engines/engine.ts';
import { inputItems } from './convert.ts';
import { ResponseBuilder, type StreamEvent } from './events.ts';
import { MAX_STEPS, type McpConnector, runResponse, STEP_NANO } from './runtime.ts';

/** A model that calls `eurus__ping` whatever it is told. */
const relentless: Engine = {
  name: 'relentless',
  fingerprint: () => 'fp_test',
  embed: () => Promise.reject(new Error('not used')),
  async *chat(): AsyncGenerator<EngineEvent> {
    await Promise.resolve();
    yield { type: 'tool_call', choice: 0, index: 0, id: 'call_x', name: 'eurus__ping', arguments: '{}' };
    yield { type: 'finish', choice: 0, reason: 'tool_calls' };
    yield { type: 'usage', promptTokens: 10, completionTokens: 5 };
  },
};

const echo: McpConnector = {
  check: () => Promise.resolve(),
  connect: () =>
    Promise.resolve({
      listTools: () => Promise.resolve([{ name: 'ping', inputSchema: { type: 'object' } }]),
      callTool: () => Promise.resolve('pong'),
      close: () => Promise.resolve(),
    }),
};

function builder(events: StreamEvent[]): ResponseBuilder {
  const response = {
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
    tools: [],
    temperature: null,
    top_p: null,
    background: false,
    store: false,
    previous_response_id: null,
    max_output_tokens: null,
    max_tool_calls: null,
    usage: null,
  } satisfies Response;
  return new ResponseBuilder(response, (event) => events.push(event));
}

async function run(request: CreateResponseRequest) {
  const events: StreamEvent[] = [];
  const b = builder(events);
  const result = await runResponse(
    { engineFor: () => relentless, mcp: echo, mcpCallTimeoutMs: 1000 },
    {
      request,
      principal: { accountId: 'a', projectId: 'p', keyId: 'k', scopes: ['agents'], plan: 'standard' },
      bearer: 'sk',
      history: inputItems(request.input),
      builder: b,
      signal: new AbortController().signal,
    },
  );
  return { response: b.response, result, events };
}

describe('the runtime loop', () => {
  const request: CreateResponseRequest = {
    model: 'agents',
    input: 'Ping forever.',
    tools: [{ type: 'mcp', server_label: 'eurus' }],
  };

  it('stops a model that never stops calling tools at MAX_STEPS, incomplete, every step billed', async () => {
    const { response, result } = await run(request);
    expect(result.steps).toHaveLength(MAX_STEPS);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_tool_calls' });
    expect(response.output.filter((o) => o.type === 'mcp_call')).toHaveLength(MAX_STEPS);
    // queen: 10 input tokens at 500 nano, 5 output tokens at 2,000 nano, and the step
    expect(result.costNano).toBe(MAX_STEPS * (STEP_NANO + 10 * 500 + 5 * 2000));
    expect(response.usage?.cost_eur).toBe('1.280480000');
  });

  it('after max_tool_calls, drops further calls and asks the model without tools', async () => {
    const { response, result } = await run({ ...request, max_tool_calls: 3 });
    expect(response.output.filter((o) => o.type === 'mcp_call')).toHaveLength(3);
    // the relentless model still asks; its calls are dropped, so the response ends there
    expect(result.steps).toHaveLength(4);
    expect(response.status).toBe('completed');
  });
});
