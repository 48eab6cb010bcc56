// POST /v1/embeddings: one vector per input from the model's engine (the built-in embedding
// engine that the directory's semantic search uses, or an upstream), billed by input tokens at
// the model's input price; every call writes one usage record.
import type {
  CreateEmbeddingData,
  CreateEmbeddingResponse,
  TextModelId,
} from '../../generated/model/client/types.gen.ts';
import { DEFAULT_DIMENSIONS, truncateVector } from '../embeddings/index.ts';
import type { Limiter } from '../limits/limiter.ts';
import { takeModelTokens } from '../limits/middleware.ts';
import type { LimitSettings } from '../limits/policies.ts';
import type { Db } from '../platform/db.ts';
import { BadRequestError } from '../platform/errors.ts';
import { watchDisconnect } from '../platform/disconnect.ts';
import type { Logger } from '../platform/logger.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import { formatEur, recordUsageBatched } from '../platform/metering.ts';
import { isTextModelId, TEXT_MODELS } from './catalogue.ts';
import type { Engine } from './engines/engine.ts';
import { countTokensWithin, decodeTokens, Pace } from './tokens.ts';

export interface EmbeddingsDeps {
  db: Db;
  limiter: Limiter;
  /** What replaces the plans' limits (MODEL_RATE_LIMIT_TPM). */
  limits: LimitSettings;
  engineFor: (model: TextModelId) => Engine;
  logger: Logger;
}

export const DEFAULT_EMBEDDING_MODEL: TextModelId = 'prince';

interface Inputs {
  /** As sent: texts, or arrays of token ids. */
  raw: string[] | number[][];
  /** As texts (token ids decoded). */
  texts: string[];
  /** Tokens of each input. */
  tokens: number[];
}

/**
 * The inputs as lists, token ids checked against o200k_base, and each input's token count: a 400
 * `context_length_exceeded` for an input over the model's window (counted no further than it,
 * giving the event loop back while a long one is counted).
 */
export async function readInputs(
  input: CreateEmbeddingData['body']['input'],
  model: { id: string; contextWindow: number },
): Promise<Inputs> {
  const window = model.contextWindow;
  if (typeof input !== 'string' && input.length === 0)
    throw new BadRequestError('invalid_input', 'input must not be empty.', { param: 'input' });
  if (typeof input === 'string' || typeof input[0] === 'string') {
    const texts = typeof input === 'string' ? [input] : (input as string[]);
    const tokens: number[] = [];
    const pace = new Pace();
    for (const [position, text] of texts.entries()) {
      const count = await countTokensWithin(text, window, pace);
      if (!count.exact) throw tooLong(model.id, window, position, `more than ${window}`);
      tokens.push(count.tokens);
    }
    return { raw: texts, texts, tokens };
  }
  const arrays = typeof input[0] === 'number' ? [input as number[]] : (input as number[][]);
  const texts = arrays.map((ids, position) => {
    try {
      return decodeTokens(ids);
    } catch {
      // the spec's range (0 to 199,997) admits only ordinary tokens; this is a second guard
      throw new BadRequestError(
        'validation_failed',
        `Input ${position} holds an id that is not a token of o200k_base (the tokenizer of the text models).`,
        { param: 'input' },
      );
    }
  });
  return { raw: arrays, texts, tokens: arrays.map((ids) => ids.length) };
}

function tooLong(model: string, window: number, position: number, held: string): BadRequestError {
  return new BadRequestError(
    'context_length_exceeded',
    `The context window of ${model} is ${window} tokens, but input ${position} holds ${held} tokens. ` +
      `Shorten or split it.`,
    { param: 'input' },
  );
}

/** float: the numbers, rounded to float32 as stored; base64: the little-endian float32 bytes. */
export function encodeVector(vector: Float32Array, format: 'float' | 'base64'): number[] | string {
  if (format === 'base64') {
    const bytes = Buffer.alloc(vector.length * 4);
    vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
    return bytes.toString('base64');
  }
  return Array.from(vector);
}

export function createEmbeddingsRouter(deps: EmbeddingsDeps) {
  const api: OperationRouter = operationRouter();
  api.on('createEmbedding', async ({ body, res, principal: caller }) => {
    const started = Date.now();
    const model = body.model ?? DEFAULT_EMBEDDING_MODEL;
    if (!isTextModelId(model)) {
      throw new BadRequestError(
        'model_not_supported',
        `Model '${String(model)}' does not serve embeddings.`,
        {
          param: 'model',
        },
      );
    }
    const dimensions = body.dimensions ?? DEFAULT_DIMENSIONS;
    const format = body.encoding_format ?? 'float';
    const entry = TEXT_MODELS[model];
    const inputs = await readInputs(body.input, entry);
    inputs.tokens.forEach((count, position) => {
      if (count > entry.contextWindow) throw tooLong(model, entry.contextWindow, position, String(count));
    });
    const promptTokens = inputs.tokens.reduce((sum, count) => sum + count, 0);
    const principal = caller();

    // Tokens per minute, shared with chat completions of the same model.
    await takeModelTokens(deps.limiter, res, principal, model, promptTokens, deps.limits);

    const client = watchDisconnect(res);
    const bill = async (status: number, tokens: number) => {
      await recordUsageBatched(deps.db, principal, {
        service: 'model',
        model,
        endpoint: '/v1/embeddings',
        inputTokens: tokens,
        costNano: status === 200 ? tokens * entry.inputNanoPerToken : 0,
        status,
        latencyMs: Date.now() - started,
      }).catch((err: unknown) => deps.logger.error({ err }, 'usage record failed'));
    };

    let result;
    try {
      result = await deps
        .engineFor(model)
        .embed({ model, input: inputs.raw, texts: inputs.texts, dimensions }, { signal: client.signal });
    } catch (err) {
      await bill(client.statusOf(err), promptTokens);
      if (client.left) return SENT; // nobody is listening
      throw err;
    }
    const billed = result.promptTokens ?? promptTokens;
    await bill(200, billed);
    const answer: CreateEmbeddingResponse = {
      object: 'list',
      data: result.vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        // an upstream model may be wider than what was asked: keep the first, renormalised
        embedding: encodeVector(truncateVector(vector, dimensions), format),
      })),
      model,
      usage: {
        prompt_tokens: billed,
        total_tokens: billed,
        cost_eur: formatEur(billed * entry.inputNanoPerToken),
        currency: 'EUR',
      },
    };
    return { status: 200, body: answer };
  });
  return api;
}
