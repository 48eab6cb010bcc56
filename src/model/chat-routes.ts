// POST /v1/chat/completions: buffered JSON or SSE (docs/streaming.md), both assembled from the same
// engine events so they bill the same; a client that leaves mid-stream stops the generation and
// pays for what was generated before it left, and its usage record says so.
import { setTimeout as delay } from 'node:timers/promises';
import type { CreateChatCompletionRequest } from '../../generated/model/client/types.gen.ts';
import type { Limiter } from '../limits/limiter.ts';
import { takeModelTokens } from '../limits/middleware.ts';
import type { LimitSettings } from '../limits/policies.ts';
import type { Db } from '../platform/db.ts';
import { BadRequestError } from '../platform/errors.ts';
import { watchDisconnect } from '../platform/disconnect.ts';
import type { Logger } from '../platform/logger.ts';
import { requestIdOf } from '../platform/request-id.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import { recordUsageBatched } from '../platform/metering.ts';
import { isTextModelId } from './catalogue.ts';
import { ChatAssembly, isAbort } from './engines/assemble.ts';
import { assertChatRequest } from './engines/chat.ts';
import type { Engine } from './engines/engine.ts';
import { promptTokensFitting } from './tokens.ts';
import { openSse } from '../platform/sse.ts';

export interface ChatDeps {
  db: Db;
  limiter: Limiter;
  /** What replaces the plans' limits (MODEL_RATE_LIMIT_TPM). */
  limits: LimitSettings;
  engineFor: (model: string) => Engine;
  logger: Logger;
  /** SSE_deps.keepAliveMs: a comment line on a quiet stream this often. */
  keepAliveMs: number;
}

function checkRequest(body: CreateChatCompletionRequest): void {
  if (!isTextModelId(body.model)) {
    throw new BadRequestError(
      'model_not_supported',
      `Model '${body.model}' does not serve chat completions.`,
      {
        param: 'model',
      },
    );
  }
  assertChatRequest(body);
}

export function createChatRouter(deps: ChatDeps) {
  const api: OperationRouter = operationRouter();
  api.on('createChatCompletion', async ({ body, res, principal: caller }) => {
    const started = Date.now();
    checkRequest(body);
    const principal = caller();
    const model = body.model;
    const maxCompletion = body.max_completion_tokens ?? body.max_tokens ?? null;
    const promptTokens = await promptTokensFitting(model, body, maxCompletion);

    // Tokens per minute: the prompt and the most the answer may take, reserved before dispatch.
    await takeModelTokens(
      deps.limiter,
      res,
      principal,
      model,
      promptTokens + (maxCompletion ?? 0),
      deps.limits,
    );

    const engine = deps.engineFor(model);
    const client = watchDisconnect(res);
    const assembly = new ChatAssembly({
      model,
      promptTokens,
      fingerprint: engine.fingerprint(model),
      n: body.n ?? 1,
      includeUsage: body.stream_options?.include_usage === true,
      requestId: requestIdOf(res),
    });
    const events = engine.chat(body, { signal: client.signal, promptTokens, whole: body.stream !== true });
    const bill = async (status: number) => {
      const billing = assembly.billing();
      await recordUsageBatched(deps.db, principal, {
        service: 'model',
        model,
        endpoint: '/v1/chat/completions',
        inputTokens: billing.promptTokens,
        outputTokens: billing.completionTokens,
        costNano: status === 200 ? billing.costNano : 0,
        status,
        latencyMs: Date.now() - started,
        streamed: body.stream === true,
        disconnected: client.left,
      }).catch((err: unknown) => deps.logger.error({ err }, 'usage record failed'));
    };

    if (body.stream !== true) {
      try {
        const completion = await assembly.collect(events);
        await bill(200);
        return { status: 200, body: completion };
      } catch (err) {
        await bill(client.statusOf(err));
        if (!client.left) throw err;
        return SENT; // nobody is listening
      }
    }

    // Streamed: every check above already answered with a JSON error, and so does an engine
    // failure before the first chunk, as long as it comes within one keep-alive interval. An
    // engine slower than that gets the 200 and keep-alive comments while it thinks; a failure
    // after the 200 is an error chunk (the assembler's).
    const chunks = assembly.stream(events)[Symbol.asyncIterator]();
    const firstChunk = chunks.next();
    firstChunk.catch(() => {});
    const waited = await Promise.race([
      firstChunk.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      delay(deps.keepAliveMs, undefined, { ref: false }),
    ]);
    if (waited && 'error' in waited) {
      const err = waited.error;
      await bill(client.statusOf(err));
      if (client.left) return SENT;
      throw err;
    }
    // the event stream is written here, past the response validator (SENT)
    const stream = openSse(res, { keepAliveMs: deps.keepAliveMs });
    if (!waited) stream.keepAlive();
    try {
      let next = await firstChunk;
      while (!next.done) {
        stream.send(next.value);
        next = await chunks.next();
      }
      stream.sendRaw('[DONE]');
      await bill(200);
    } catch (err) {
      if (!isAbort(err)) deps.logger.error({ err }, 'stream failed after the 200');
      await bill(200);
    } finally {
      stream.end();
    }
    return SENT;
  });
  return api;
}
