// The glue a chat route needs, without HTTP: the checks the spec puts before dispatch, then the
// engine's events and the assembly that turns them into the answer and the bill.
import type { CreateChatCompletionRequest } from '../../../generated/model/client/types.gen.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { BadRequestError } from '../../platform/errors.ts';
import { assertFitsContext, countPromptTokens } from '../tokens.ts';
import { ChatAssembly } from './assemble.ts';
import type { Engine, EngineEvent } from './engine.ts';

const metaSchema = new Ajv2020({ strict: false, validateFormats: false });

/**
 * A 400 unless `schema` is a JSON Schema (checked against the 2020-12 meta-schema): a
 * `response_format` / `text.format` schema or a tool's `parameters` that is not one would
 * otherwise be answered with guesses.
 */
export function assertJsonSchema(schema: unknown, param: string): void {
  let valid = false;
  try {
    // checked as 2020-12 whatever draft `$schema` names: the keywords a tool schema uses agree
    const plain =
      typeof schema === 'object' && schema !== null && !Array.isArray(schema)
        ? Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$schema'))
        : schema;
    valid = metaSchema.validateSchema(plain as object) as boolean;
  } catch {
    valid = false;
  }
  if (!valid) {
    const why = metaSchema.errorsText(metaSchema.errors, { dataVar: 'schema' });
    throw new BadRequestError('invalid_json_schema', `${param} is not a JSON Schema: ${why}.`, { param });
  }
}

/**
 * The 400s of the spec that a schema cannot express: `max_tokens` with `max_completion_tokens`,
 * `stream_options` without `stream`, `tool_choice` `required` or a named function without
 * `tools`, a named function that is not among `tools`, a JSON schema that is not one.
 */
export function assertChatRequest(request: CreateChatCompletionRequest): void {
  if (
    request.max_tokens !== undefined &&
    request.max_tokens !== null &&
    request.max_completion_tokens !== undefined &&
    request.max_completion_tokens !== null
  ) {
    throw new BadRequestError(
      'validation_failed',
      'Give max_completion_tokens or its deprecated alias max_tokens, not both.',
      { param: 'max_tokens' },
    );
  }
  if (request.stream_options !== undefined && request.stream_options !== null && request.stream !== true) {
    throw new BadRequestError('validation_failed', 'stream_options is only taken with stream: true.', {
      param: 'stream_options',
    });
  }
  const format = request.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema !== undefined) {
    assertJsonSchema(format.json_schema.schema, 'response_format.json_schema.schema');
  }
  const choice = request.tool_choice;
  const tools = request.tools ?? [];
  tools.forEach((tool, i) => {
    if (tool.function.parameters !== undefined) {
      assertJsonSchema(tool.function.parameters, `tools[${i}].function.parameters`);
    }
  });
  if (choice === 'required' && tools.length === 0) {
    throw new BadRequestError('validation_failed', 'tool_choice "required" needs tools.', {
      param: 'tool_choice',
    });
  }
  if (typeof choice === 'object' && !tools.some((tool) => tool.function.name === choice.function.name)) {
    throw new BadRequestError(
      'validation_failed',
      `tool_choice names ${choice.function.name}, which is not in tools.`,
      {
        param: 'tool_choice',
      },
    );
  }
}

export interface ChatRun {
  /** Prompt tokens as counted here (billed unless the engine reports its own). */
  promptTokens: number;
  /** Builds the answer (`collect` or `stream`) and tells the bill (`billing()`) at any moment. */
  assembly: ChatAssembly;
  /** The engine's events; nothing is generated until they are iterated. */
  events: AsyncIterable<EngineEvent>;
}

/**
 * Runs the checks that belong before the 200 (request rules, the context window) and prepares
 * the engine's answer. Throws a 400 ApiError when a check fails.
 */
export function startChat(
  engine: Engine,
  request: CreateChatCompletionRequest,
  options: { signal?: AbortSignal; requestId?: string } = {},
): ChatRun {
  assertChatRequest(request);
  const promptTokens = countPromptTokens(request);
  assertFitsContext(request.model, promptTokens, request.max_completion_tokens ?? request.max_tokens ?? null);
  const assembly = new ChatAssembly({
    model: request.model,
    promptTokens,
    fingerprint: engine.fingerprint(request.model),
    n: request.n ?? 1,
    includeUsage: request.stream === true && request.stream_options?.include_usage === true,
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
  });
  const events = engine.chat(request, {
    promptTokens,
    whole: request.stream !== true,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { promptTokens, assembly, events };
}
