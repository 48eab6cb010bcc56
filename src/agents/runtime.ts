// The loop behind /v1/responses: a model call (as a chat completion, on any engine), the mcp
// calls it asked for run here with their results back, until the model answers or asks for a
// function call the client runs. Bounded: at most MAX_STEPS model calls, `max_tool_calls` tool
// calls, `max_output_tokens` output tokens over all calls, each mcp call within its timeout.
// With `model: "agents"` every model call is a billed step.
import type {
  ChatCompletionToolChoiceOption,
  CreateChatCompletionRequest,
  CreateResponseRequest,
  ResponseMcpListTools,
  ResponseMcpTool,
  ResponseStep,
  TextModelId,
} from '../../generated/model/client/types.gen.ts';
import { ApiError, BadRequestError } from '../platform/errors.ts';
import type { Principal } from '../platform/principal.ts';
import { formatEur } from '../platform/metering.ts';
import { costNano, getModel, isTextModelId } from '../model/catalogue.ts';
import { normalizeToolCallId } from '../model/engines/assemble.ts';
import type { Engine } from '../model/engines/engine.ts';
import {
  assertFitsContext,
  countCompletionTokens,
  countPromptTokens,
  promptTokensFitting,
} from '../model/tokens.ts';
import { chatMessages, functionTools, type HistoryItem, type ModelTool, responseFormat } from './convert.ts';
import type { ResponseBuilder } from './events.ts';
import { withTimeout } from '../platform/timeout.ts';
import { nowSeconds } from '../platform/clock.ts';

/** Model calls a response may make, whatever `max_tool_calls` says. */
export const MAX_STEPS = 32;
/** What one step of `agents` costs besides its tokens: 0.04 EUR. */
export const STEP_NANO = getModel('agents')?.prices[0]?.nanoPerUnit ?? 40_000_000;
/** The text model `agents` runs on unless `metadata.agents_model` names another. */
export const DEFAULT_AGENTS_MODEL: TextModelId = 'queen';

/** A tool an MCP server offers. */
export interface McpToolInfo {
  name: string;
  description?: string | null;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown> | null;
}

/** An open session with one MCP server. Failures are thrown as Errors whose message says why. */
export interface McpConnection {
  listTools(signal: AbortSignal): Promise<McpToolInfo[]>;
  /** The tool's result as text (JSON for structured results); throws when the call failed. */
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

/** Opens sessions with the MCP servers of `mcp` tools, as the caller. */
export interface McpConnector {
  /** Throws a 400 for a tool it cannot serve (unknown label, a URL the guard refuses). */
  check(tool: ResponseMcpTool, principal: Principal): Promise<void>;
  connect(tool: ResponseMcpTool, caller: { principal: Principal; bearer: string }): Promise<McpConnection>;
}

export interface RuntimeDeps {
  engineFor(model: TextModelId): Engine;
  mcp?: McpConnector | undefined;
  /** Time one mcp call may take. */
  mcpCallTimeoutMs: number;
}

/** What a step spent, with the times the runtime did not spend itself (for the benchmark). */
export interface StepRecord extends ResponseStep {
  /** The step's duration, model call and tool calls, unrounded. */
  stepMs: number;
  modelMs: number;
  toolMs: number;
  costNano: number;
}

export interface RunResult {
  inputTokens: number;
  outputTokens: number;
  steps: StepRecord[];
  costNano: number;
}

/** Adds a step's tokens, times and cost (`nano`) to what the run spent. */
function spend(
  result: RunResult,
  step: { index: number; model: TextModelId; input: number; output: number; nano: number },
  calls: StepRecord['tool_calls'],
  times: { stepMs: number; modelMs: number; toolMs: number },
): void {
  result.inputTokens += step.input;
  result.outputTokens += step.output;
  result.costNano += step.nano;
  result.steps.push({
    index: step.index,
    model: step.model,
    input_tokens: step.input,
    output_tokens: step.output,
    tool_calls: calls,
    duration_ms: Math.round(times.stepMs),
    cost: formatEur(step.nano),
    ...times,
    costNano: step.nano,
  });
}

/** The text model that answers: the request's, or for `agents` the one it runs on. */
export function textModelOf(request: CreateResponseRequest): TextModelId {
  if (request.model !== 'agents') return request.model;
  const named = request.metadata?.agents_model;
  return named !== undefined && isTextModelId(named) ? named : DEFAULT_AGENTS_MODEL;
}

/** The name the model knows an mcp tool by. */
export function mcpToolName(serverLabel: string, name: string): string {
  return `${serverLabel}__${name}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}

function allowedByFilter(tool: ResponseMcpTool, name: string): boolean {
  const allowed = tool.allowed_tools;
  if (allowed === undefined || allowed === null) return true;
  const names = Array.isArray(allowed) ? allowed : allowed.tool_names;
  return names === undefined || names.includes(name);
}

/**
 * The request's rules a schema cannot state, checked before anything runs (a 400 each):
 * unique tool names and labels, a tool_choice that names a tool of `tools`, `required` with tools.
 */
export function assertTools(request: CreateResponseRequest): void {
  const tools = request.tools ?? [];
  const seen = new Set<string>();
  for (const tool of tools) {
    const key = tool.type === 'function' ? `function:${tool.name}` : `mcp:${tool.server_label}`;
    if (seen.has(key)) {
      throw new BadRequestError(
        'duplicate_tool',
        tool.type === 'function'
          ? `Two function tools are named '${tool.name}'.`
          : `Two mcp tools have the server_label '${tool.server_label}'.`,
        { param: 'tools' },
      );
    }
    seen.add(key);
  }
  const choice = request.tool_choice;
  if (choice === 'required' && tools.length === 0) {
    throw new BadRequestError('validation_failed', 'tool_choice "required" needs tools.', {
      param: 'tool_choice',
    });
  }
  if (typeof choice === 'object' && choice !== null) {
    const found =
      choice.type === 'function'
        ? tools.some((t) => t.type === 'function' && t.name === choice.name)
        : tools.some((t) => t.type === 'mcp' && t.server_label === choice.server_label);
    if (!found) {
      throw new BadRequestError(
        'validation_failed',
        choice.type === 'function'
          ? `tool_choice names the function '${choice.name}', which is not in tools.`
          : `tool_choice names the mcp server '${choice.server_label}', which is not in tools.`,
        { param: 'tool_choice' },
      );
    }
  }
}

interface Server {
  tool: ResponseMcpTool;
  connection: McpConnection | undefined;
  tools: McpToolInfo[];
}

interface OpenCall {
  outputIndex: number;
  kind: 'function' | 'mcp';
  name: string;
  server?: Server;
  toolName?: string;
}

/** The step's tool choice as a chat tool_choice: a named choice binds the first step only. */
function chatToolChoice(
  request: CreateResponseRequest,
  step: number,
  toolsLeft: boolean,
  modelTools: readonly ModelTool[],
): ChatCompletionToolChoiceOption | undefined {
  if (!toolsLeft) return 'none';
  const choice = request.tool_choice;
  if (choice === undefined || choice === null) return undefined;
  if (step > 0) return choice === 'none' ? 'none' : 'auto';
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function') return { type: 'function', function: { name: choice.name } };
  const named =
    choice.name !== undefined && choice.name !== null
      ? modelTools.find((t) => t.serverLabel === choice.server_label && t.name === choice.name)
      : modelTools.find((t) => t.serverLabel === choice.server_label);
  return named !== undefined
    ? { type: 'function', function: { name: named.chat.function.name } }
    : 'required';
}

export interface RunInput {
  request: CreateResponseRequest;
  principal: Principal;
  /** The caller's own key, for the hub's calls made on its behalf. */
  bearer: string;
  /** The conversation before this response's output. */
  history: HistoryItem[];
  builder: ResponseBuilder;
  signal: AbortSignal;
  /** Filled step by step, so a failed or cancelled run still tells what it spent. */
  progress?: RunResult;
}

/**
 * Prompt tokens of the first model call, for the checks before dispatch (rate limits): counted
 * within the model's window (a long input gives the event loop back while it is counted), a 400
 * `context_length_exceeded` when it does not fit with `max_output_tokens`.
 */
export function firstCallTokens(
  request: CreateResponseRequest,
  history: HistoryItem[],
  model: TextModelId,
): Promise<number> {
  const chat = {
    messages: chatMessages(request.instructions, history, mcpToolName),
    tools: functionTools(request.tools).map((t) => t.chat),
  };
  const format = responseFormat(request.text);
  return promptTokensFitting(
    model,
    {
      messages: chat.messages,
      ...(chat.tools.length > 0 ? { tools: chat.tools } : {}),
      ...(format === undefined ? {} : { response_format: format }),
    },
    request.max_output_tokens ?? null,
  );
}

/**
 * Runs the response to its end, telling `builder` everything as it happens, and returns what it
 * spent. Sets the response's status, usage, steps and completion time; an engine failure is
 * thrown (an ApiError) after the builder has what was produced.
 */
export async function runResponse(deps: RuntimeDeps, input: RunInput): Promise<RunResult> {
  const { request, builder, signal } = input;
  const model = textModelOf(request);
  const engine = deps.engineFor(model);
  const agents = request.model === 'agents';
  const result: RunResult = input.progress ?? { inputTokens: 0, outputTokens: 0, steps: [], costNano: 0 };
  const maxToolCalls = request.max_tool_calls ?? Infinity;
  let toolCalls = 0;
  let outputBudget = request.max_output_tokens ?? Infinity;
  const history = [...input.history];
  const servers: Server[] = [];
  try {
    // the servers' tools, listed once (an `mcp_list_tools` item each)
    for (const tool of request.tools ?? []) {
      if (tool.type !== 'mcp') continue;
      const server: Server = { tool, connection: undefined, tools: [] };
      servers.push(server);
      try {
        if (deps.mcp === undefined) throw new Error('mcp tools are not available on this deployment');
        server.connection = await deps.mcp.connect(tool, {
          principal: input.principal,
          bearer: input.bearer,
        });
        const listed = await withTimeout(deps.mcpCallTimeoutMs, signal, (s) =>
          (server.connection as McpConnection).listTools(s),
        );
        server.tools = listed.filter((t) => allowedByFilter(tool, t.name));
        builder.listedTools(tool.server_label, server.tools.map(listedTool), null);
      } catch (err) {
        if (signal.aborted) throw err;
        builder.listedTools(
          tool.server_label,
          [],
          `Listing the tools of '${tool.server_label}' failed: ${reason(err)}`,
        );
      }
    }
    const modelTools: ModelTool[] = [
      ...functionTools(request.tools),
      ...servers.flatMap((server) =>
        server.tools.map((t): ModelTool => ({
          kind: 'mcp',
          serverLabel: server.tool.server_label,
          name: t.name,
          chat: {
            type: 'function',
            function: {
              name: mcpToolName(server.tool.server_label, t.name),
              description:
                [server.tool.server_description, t.description].filter(Boolean).join(' ') || t.name,
              parameters: t.inputSchema,
            },
          },
        })),
      ),
    ];
    const byChatName = new Map(modelTools.map((t) => [t.chat.function.name, t]));

    let ended: 'completed' | 'incomplete' | undefined;
    for (let step = 0; step < MAX_STEPS && ended === undefined; step++) {
      const stepStarted = performance.now();
      const firstOutput = builder.response.output.length;
      const toolsLeft = toolCalls < maxToolCalls;
      const messages = chatMessages(request.instructions, history, mcpToolName);
      const format = responseFormat(request.text);
      const chat: CreateChatCompletionRequest = {
        model,
        messages,
        ...(modelTools.length > 0 ? { tools: modelTools.map((t) => t.chat) } : {}),
        ...(modelTools.length > 0 ? { parallel_tool_calls: request.parallel_tool_calls !== false } : {}),
        ...(format === undefined ? {} : { response_format: format }),
        ...(Number.isFinite(outputBudget) ? { max_completion_tokens: Math.max(1, outputBudget) } : {}),
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        ...(request.top_p === undefined ? {} : { top_p: request.top_p }),
        ...(request.seed === undefined ? {} : { seed: request.seed }),
      };
      const choice = modelTools.length > 0 ? chatToolChoice(request, step, toolsLeft, modelTools) : undefined;
      if (choice !== undefined) chat.tool_choice = choice;
      const promptTokens = countPromptTokens(chat);
      assertFitsContext(model, promptTokens, chat.max_completion_tokens ?? null);

      // the model call, its items as they come
      const modelStarted = performance.now();
      let message: number | undefined;
      let finish: string | undefined;
      const calls = new Map<number, OpenCall | null>();
      let reported: { promptTokens: number; completionTokens: number } | undefined;
      let content = '';
      const produced: { name: string; arguments: string }[] = [];
      const closeMessage = (status: 'completed' | 'incomplete') => {
        if (message !== undefined) builder.finishMessage(message, status);
        message = undefined;
      };
      try {
        for await (const event of engine.chat(chat, { signal, promptTokens })) {
          if (event.type === 'content' && event.choice === 0) {
            message ??= builder.startMessage();
            content += event.text;
            builder.text(message, event.text);
          } else if (event.type === 'tool_call' && event.choice === 0) {
            let call = calls.get(event.index);
            if (call === undefined) {
              closeMessage('completed');
              if (toolCalls >= maxToolCalls) {
                calls.set(event.index, null); // beyond max_tool_calls: dropped
                continue;
              }
              toolCalls++;
              const name = event.name ?? '';
              const tool = byChatName.get(name);
              if (tool?.kind === 'mcp') {
                const server = servers.find((s) => s.tool.server_label === tool.serverLabel);
                call = {
                  kind: 'mcp',
                  name,
                  toolName: tool.name,
                  ...(server === undefined ? {} : { server }),
                  outputIndex: builder.startMcpCall(tool.serverLabel ?? '', tool.name),
                };
              } else {
                call = {
                  kind: 'function',
                  name,
                  outputIndex: builder.startFunctionCall(normalizeToolCallId(event.id), name),
                };
              }
              calls.set(event.index, call);
              produced.push({ name, arguments: '' });
            }
            if (call === null) continue;
            if (event.arguments !== undefined) {
              builder.arguments(call.outputIndex, event.arguments);
              const last = produced[produced.length - 1];
              if (last !== undefined) last.arguments += event.arguments;
            }
          } else if (event.type === 'finish' && event.choice === 0) {
            finish = event.reason;
          } else if (event.type === 'usage') {
            reported = { promptTokens: event.promptTokens, completionTokens: event.completionTokens };
          } else if (event.type === 'error') {
            throw event.error;
          }
        }
      } catch (err) {
        // A client that leaves pays for what the interrupted call generated (and, on agents, for
        // the step), as a chat completion does; an engine failure bills nothing for its call.
        if (signal.aborted) {
          const output = countCompletionTokens([{ content, toolCalls: produced }]);
          const nano = costNano(model, promptTokens, output) + (agents ? STEP_NANO : 0);
          const stepMs = performance.now() - stepStarted;
          spend(result, { index: step, model, input: promptTokens, output, nano }, [], {
            stepMs,
            modelMs: performance.now() - modelStarted,
            toolMs: 0,
          });
        }
        throw err;
      }
      const modelMs = performance.now() - modelStarted;
      const cut = finish === 'length';
      closeMessage(cut ? 'incomplete' : 'completed');
      const stepInput = reported?.promptTokens ?? promptTokens;
      const stepOutput =
        reported?.completionTokens ?? countCompletionTokens([{ content, toolCalls: produced }]);
      outputBudget -= stepOutput;

      // the calls: functions are the client's, mcp calls run here, one after another
      const stepCalls: StepRecord['tool_calls'] = [];
      let toolMs = 0;
      let functionCalls = 0;
      let mcpCalls = 0;
      for (const call of calls.values()) {
        if (call === null) continue;
        if (call.kind === 'function') {
          builder.finishFunctionCall(call.outputIndex, cut ? 'incomplete' : 'completed');
          functionCalls++;
          stepCalls.push({ type: 'function', name: call.name, status: 'requested', duration_ms: 0 });
          continue;
        }
        mcpCalls++;
        builder.callingMcp(call.outputIndex);
        const started = performance.now();
        const item = builder.response.output[call.outputIndex];
        const outcome = cut
          ? { error: 'The arguments were cut short by max_output_tokens.' }
          : await callMcp(deps, call, item?.type === 'mcp_call' ? item.arguments : '', signal);
        const ms = performance.now() - started;
        toolMs += ms;
        builder.finishMcpCall(call.outputIndex, outcome);
        stepCalls.push({
          type: 'mcp',
          name: `${call.server?.tool.server_label ?? ''}.${call.toolName ?? call.name}`,
          status: 'error' in outcome ? 'failed' : 'completed',
          duration_ms: Math.round(ms),
        });
      }
      history.push(...builder.response.output.slice(firstOutput));

      const stepMs = performance.now() - stepStarted;
      const tokensNano = costNano(model, stepInput, stepOutput);
      const stepNano = tokensNano + (agents ? STEP_NANO : 0);
      spend(result, { index: step, model, input: stepInput, output: stepOutput, nano: stepNano }, stepCalls, {
        stepMs,
        modelMs,
        toolMs,
      });

      if (cut) {
        builder.response.incomplete_details = { reason: 'max_output_tokens' };
        ended = 'incomplete';
      } else if (functionCalls > 0 || mcpCalls === 0) {
        ended = 'completed';
      }
    }
    if (ended === undefined) {
      builder.response.incomplete_details = { reason: 'max_tool_calls' };
      ended = 'incomplete';
    }
    finishResponse(builder, request, result, ended);
    return result;
  } finally {
    await Promise.all(servers.map((s) => s.connection?.close().catch(() => {})));
  }
}

/** Sets the response's final status, usage and steps. */
export function finishResponse(
  builder: ResponseBuilder,
  request: CreateResponseRequest,
  result: RunResult,
  status: 'completed' | 'incomplete' | 'failed' | 'cancelled',
): void {
  const response = builder.response;
  response.status = status;
  response.completed_at = nowSeconds();
  response.usage = {
    input_tokens: result.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: result.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: result.inputTokens + result.outputTokens,
    ...(request.model === 'agents' ? { steps: result.steps.length } : {}),
    cost_eur: formatEur(result.costNano),
    currency: 'EUR',
  };
  response.steps =
    request.model === 'agents'
      ? result.steps.map((step) => ({
          index: step.index,
          model: step.model,
          input_tokens: step.input_tokens,
          output_tokens: step.output_tokens,
          tool_calls: step.tool_calls,
          duration_ms: step.duration_ms,
          cost: step.cost,
        }))
      : null;
}

function listedTool(tool: McpToolInfo): ResponseMcpListTools['tools'][number] {
  return {
    name: tool.name,
    description: tool.description ?? null,
    input_schema: tool.inputSchema,
    annotations: tool.annotations ?? null,
  };
}

function reason(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** One mcp call: its output, or why it failed (never thrown: a failed call is an item, not a failed response). */
async function callMcp(
  deps: RuntimeDeps,
  call: OpenCall,
  args: string,
  signal: AbortSignal,
): Promise<{ output: string } | { error: string }> {
  const server = call.server;
  const label = server?.tool.server_label ?? 'the server';
  if (server?.connection === undefined) return { error: `The mcp server '${label}' is not available.` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(args === '' ? '{}' : args);
  } catch {
    return { error: `The arguments of ${call.toolName ?? call.name} are not valid JSON.` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { error: `The arguments of ${call.toolName ?? call.name} must be a JSON object.` };
  }
  const connection = server.connection;
  try {
    const output = await withTimeout(deps.mcpCallTimeoutMs, signal, (s) =>
      connection.callTool(call.toolName ?? call.name, parsed as Record<string, unknown>, s),
    );
    return { output };
  } catch (err) {
    if (signal.aborted) throw err;
    return { error: `${label}: ${call.toolName ?? call.name} failed: ${reason(err)}` };
  }
}

/** An engine failure as the response's error. */
export function responseErrorOf(err: unknown): { code: string; message: string } {
  if (err instanceof ApiError) return { code: err.code, message: err.message };
  return { code: 'server_error', message: 'The response failed on the server.' };
}
