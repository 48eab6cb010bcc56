// The concierge's agent: runs on the Model API's agents runtime (`POST /v1/responses`,
// `model: "agents"`) through our own generated client, with the platform's own key. Each call is
// one agent run of a stage: the hub's directory tools (`mcp`, `server_label: eurus`) run on the
// server, and the concierge's own function tools (`read_brief`, `read_reply`,
// `compare_providers`) are answered here, by code, and handed back with `previous_response_id`
// until the model answers in text. What the runtime spends (steps, tokens, the hub's searches)
// is billed to the platform's account, not to the customer, who pays the task's price alone.
//
// Authentication: the directory service keeps one API key of a platform account (`concierge
// runtime`) with the scopes `agents`, `search` and `places`, made at first use, its secret sealed
// with the secrets key in `concierge_runtime`. A key revoked by an operator is replaced at the
// next call.
import { createClient, createConfig } from '../../generated/model/client/client/index.ts';
import { createResponse } from '../../generated/model/client/sdk.gen.ts';
import type {
  CreateResponseRequest,
  Response as AgentResponse,
  ResponseInputItem,
  ResponseTool,
  ResponseToolChoice,
} from '../../generated/model/client/types.gen.ts';
import type { AccountStore } from '../accounts/store.ts';
import type { Db } from '../platform/db.ts';
import { ApiError } from '../platform/errors.ts';
import { NANO_PER_EUR } from '../platform/metering.ts';
import type { SecretBox } from '../platform/secrets.ts';

export const RUNTIME_ACCOUNT = 'concierge runtime';
const RUNTIME_ROW = 'default';
const RUNTIME_SCOPES = ['agents', 'search', 'places'];
/** A model call or a hub search should never take this long; the job retries after it. */
const CALL_TIMEOUT_MS = 120_000;
/** Rounds of function calls answered before the agent must answer in text. */
const MAX_ROUNDS = 4;

/** A failure worth retrying later (the Model API down, saturated, slow, or the key replaced). */
export class AgentUnavailable extends Error {
  override name = 'AgentUnavailable';
}

/** A failure no retry cures: the workflow fails with it. */
export class AgentFailed extends Error {
  override name = 'AgentFailed';
  readonly code: string;
  /** The HTTP status whose error type the workflow's `error` takes: 400 for what the brief asked, 502 for the runtime. */
  readonly status: number;
  constructor(code: string, message: string, status = 502) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

export interface AgentCall {
  instructions: string;
  input: string;
  tools: ResponseTool[];
  toolChoice: ResponseToolChoice;
  /** Makes the run repeatable on the built-in engine. */
  seed: number;
  /** Answers a function call of the concierge's own tools, as text (JSON). */
  answer?: (name: string, args: Record<string, unknown>) => Promise<string> | string;
  metadata: Record<string, string>;
  signal?: AbortSignal;
}

export interface McpCallOutcome {
  name: string;
  arguments: Record<string, unknown>;
  output: string | null;
  error: string | null;
}

export interface AgentRun {
  /** The last response of the run (the one that answered in text). */
  responseId: string;
  responseIds: string[];
  text: string;
  mcpCalls: McpCallOutcome[];
  /** The concierge's own tools called, with what they answered. */
  functionCalls: { name: string; arguments: Record<string, unknown>; output: string }[];
  steps: number;
  costNano: number;
}

/** One answer in JSON to a schema, from the text model the agents runtime runs on: no tools. */
export interface StructuredCall {
  instructions: string;
  input: string;
  name: string;
  schema: Record<string, unknown>;
  seed: number;
  metadata: Record<string, string>;
  signal?: AbortSignal;
}

export interface StructuredRun {
  responseId: string;
  /** The model's answer as it gave it (JSON, unchecked). */
  text: string;
  steps: number;
  costNano: number;
}

export interface Agent {
  run(call: AgentCall): Promise<AgentRun>;
  /** `POST /v1/responses` with `text.format` a JSON schema, strict. */
  structured(call: StructuredCall): Promise<StructuredRun>;
}

/** The platform's key for the runtime: made once, kept sealed, replaced when revoked. */
export class RuntimeKey {
  readonly #db: Db;
  readonly #accounts: AccountStore;
  readonly #box: SecretBox | undefined;
  #secret: Promise<string> | undefined;

  constructor(db: Db, accounts: AccountStore, box: SecretBox | undefined) {
    this.#db = db;
    this.#accounts = accounts;
    this.#box = box;
  }

  get available(): boolean {
    return this.#box !== undefined;
  }

  secret(): Promise<string> {
    this.#secret ??= this.#load().catch((err: unknown) => {
      this.#secret = undefined;
      throw err;
    });
    return this.#secret;
  }

  /** Forgets the key (the Model API refused it); the next call makes sure a live one exists. */
  async replace(): Promise<void> {
    this.#secret = undefined;
    await this.#db.query('delete from concierge_runtime where id = $1', [RUNTIME_ROW]);
  }

  async #load(): Promise<string> {
    const box = this.#box;
    if (box === undefined)
      throw new AgentFailed('secrets_unavailable', 'No SECRETS_ENCRYPTION_KEY to keep the runtime key with.');
    const read = async () => {
      const [row] = await this.#db.query<{ key_id: string; secret_sealed: string }>(
        'select key_id, secret_sealed from concierge_runtime where id = $1',
        [RUNTIME_ROW],
      );
      return row ? box.open(row.secret_sealed, row.key_id) : undefined;
    };
    const existing = await read();
    if (existing !== undefined) return existing;
    const named = await this.#accounts.accountNamed(RUNTIME_ACCOUNT);
    const account = { id: named ?? (await this.#accounts.createAccount(RUNTIME_ACCOUNT)).accountId };
    const key = await this.#accounts.createKey(account.id, {
      name: 'concierge agents runtime',
      scopes: RUNTIME_SCOPES,
    });
    // of several instances making one at once, the first row stays; the others' keys are revoked
    const [kept] = await this.#db.query<{ key_id: string }>(
      `insert into concierge_runtime (id, account_id, key_id, secret_sealed, created) values ($1, $2, $3, $4, $5)
       on conflict (id) do nothing returning key_id`,
      [RUNTIME_ROW, account.id, key.id, box.seal(key.secret, key.id), Math.floor(Date.now() / 1000)],
    );
    if (kept) return key.secret;
    await this.#accounts.revokeKey(account.id, key.id);
    const winner = await read();
    if (winner === undefined) throw new AgentUnavailable('the runtime key was replaced meanwhile');
    return winner;
  }
}

function problemOf(status: number, body: unknown): Error {
  const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
  const message = `The agents runtime answered ${status}: ${error?.message ?? 'no message'}`;
  if (status === 408 || status === 409 || status === 429 || status >= 500)
    return new AgentUnavailable(message);
  return new AgentFailed('agent_request_refused', message);
}

const parse = (text: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
};

const costOf = (response: AgentResponse) => {
  const usage = response.usage as { cost_eur?: string; steps?: number } | null | undefined;
  return {
    steps: usage?.steps ?? 0,
    costNano: Math.round(Number(usage?.cost_eur ?? 0) * NANO_PER_EUR),
  };
};

/** The agent over HTTP: the Model API at `modelUrl()`, with the runtime key. */
export function httpAgent(modelUrl: () => string, key: Pick<RuntimeKey, 'secret' | 'replace'>): Agent {
  async function post(body: CreateResponseRequest, signal: AbortSignal | undefined): Promise<AgentResponse> {
    const secret = await key.secret();
    const client = createClient(
      createConfig({
        baseUrl: modelUrl(),
        headers: { Authorization: `Bearer ${secret}` },
      }),
    );
    const timeout = AbortSignal.timeout(CALL_TIMEOUT_MS);
    let result: Awaited<ReturnType<typeof createResponse>>;
    try {
      result = await createResponse({
        client,
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      throw new AgentUnavailable(
        `The agents runtime could not be reached: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const status = result.response?.status ?? 0;
    if (status === 401) {
      await key.replace();
      throw new AgentUnavailable(
        'The agents runtime refused the runtime key; a new one is made for the retry.',
      );
    }
    if (result.response?.ok !== true || result.data === undefined) throw problemOf(status, result.error);
    const response = result.data as AgentResponse;
    if (response.status === 'failed') {
      throw new AgentUnavailable(`The agent run failed: ${response.error?.message ?? 'no reason given'}`);
    }
    return response;
  }

  const textOf = (response: AgentResponse) =>
    response.output
      .flatMap((item) => (item.type === 'message' ? item.content : []))
      .map((part) => ('text' in part ? part.text : ''))
      .join('');

  return {
    async structured(call) {
      const response = await post(
        {
          model: 'agents',
          instructions: call.instructions,
          input: call.input,
          seed: call.seed,
          store: false,
          metadata: call.metadata,
          text: { format: { type: 'json_schema', name: call.name, schema: call.schema, strict: true } },
        },
        call.signal,
      );
      return { responseId: response.id, text: textOf(response), ...costOf(response) };
    },

    async run(call) {
      const base = {
        model: 'agents' as const,
        instructions: call.instructions,
        tools: call.tools,
        seed: call.seed,
        store: true,
        metadata: call.metadata,
      };
      let response = await post({ ...base, input: call.input, tool_choice: call.toolChoice }, call.signal);
      const run: AgentRun = {
        responseId: response.id,
        responseIds: [response.id],
        text: '',
        mcpCalls: [],
        functionCalls: [],
        steps: 0,
        costNano: 0,
      };
      for (let round = 0; ; round++) {
        const spent = costOf(response);
        run.steps += spent.steps;
        run.costNano += spent.costNano;
        for (const item of response.output) {
          if (item.type === 'mcp_call') {
            run.mcpCalls.push({
              name: item.name,
              arguments: parse(item.arguments),
              output: item.output,
              error: item.error,
            });
          }
        }
        const calls = response.output.filter((item) => item.type === 'function_call');
        if (calls.length === 0 || call.answer === undefined) break;
        if (round >= MAX_ROUNDS)
          throw new AgentFailed('agent_loop', 'The agent kept calling tools without answering.');
        const outputs: ResponseInputItem[] = [];
        for (const fc of calls) {
          const args = parse(fc.arguments);
          const output = await call.answer(fc.name, args);
          run.functionCalls.push({ name: fc.name, arguments: args, output });
          outputs.push({ type: 'function_call_output', call_id: fc.call_id, output });
        }
        response = await post(
          { ...base, input: outputs, previous_response_id: response.id, tool_choice: 'none' },
          call.signal,
        );
        run.responseId = response.id;
        run.responseIds.push(response.id);
      }
      run.text = textOf(response);
      return run;
    },
  };
}

/** An ApiError for the envelope when the runtime is needed now (a brief's checks never call it). */
export const runtimeUnavailable = (): ApiError =>
  new ApiError(
    503,
    'secrets_unavailable',
    'This deployment has no SECRETS_ENCRYPTION_KEY, so the concierge cannot keep its runtime key; ask its operator to set one.',
    {
      headers: { 'Retry-After': '3600', 'retry-after-ms': '3600000' },
    },
  );
