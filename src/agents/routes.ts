// /v1/responses: create (buffered or streamed), get (or replay its events), delete, cancel and
// the input items. Scope `chat` for the text models, `agents` for the agents runtime; the spec
// lets either key in, the model decides which one it needs.
import type { Request } from 'express';
import type {
  CreateResponseData,
  Response,
  ResponseItemList,
} from '../../generated/model/client/types.gen.ts';
import type { Limiter } from '../limits/limiter.ts';
import { takeModelTokens } from '../limits/middleware.ts';
import type { LimitSettings } from '../limits/policies.ts';
import { isAbort } from '../model/engines/assemble.ts';
import { assertJsonSchema } from '../model/engines/chat.ts';
import type { Db } from '../platform/db.ts';
import { ApiError, BadRequestError, NotFoundError, PermissionDeniedError } from '../platform/errors.ts';
import { watchDisconnect } from '../platform/disconnect.ts';
import { newId } from '../platform/ids.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import { decodeCursor, encodeCursor, nextLinkOf } from '../platform/pagination.ts';
import type { Principal } from '../platform/principal.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { recordUsageBatched } from '../platform/metering.ts';
import { assertOutputsAnswerCalls, type HistoryItem, inputItems } from './convert.ts';
import { ConversationStore, extendConversation } from './conversations.ts';
import { resolveReferences } from './references.ts';
import { ResponseBuilder, replayEvents, type StreamEvent } from './events.ts';
import {
  assertTools,
  finishResponse,
  firstCallTokens,
  type McpConnector,
  responseErrorOf,
  type RunResult,
  runResponse,
  type RuntimeDeps,
  textModelOf,
} from './runtime.ts';
import { type BackgroundDeps, defineBackground, enqueueBackground } from './background.ts';
import { ResponseStore } from './store.ts';
import { nowSeconds } from '../platform/clock.ts';
import { openSse, type SseWriter } from '../platform/sse.ts';

export interface ResponsesDeps extends RuntimeDeps {
  db: Db;
  limiter: Limiter;
  /** What replaces the plans' limits (MODEL_RATE_LIMIT_TPM). */
  limits: LimitSettings;
  logger: Logger;
  /** SSE_deps.keepAliveMs: a comment line on a quiet stream this often. */
  keepAliveMs: number;
  mcp?: McpConnector | undefined;
  /** The job queue and the secrets box: `background: true` needs both. */
  jobs?: Jobs | undefined;
  secrets?: SecretBox | undefined;
}

/** Declares the background responses' queue (its workers run here when JOB_WORKERS > 0). */
export async function startBackgroundResponses(deps: ResponsesDeps): Promise<void> {
  const background = backgroundDeps(deps);
  if (background) await defineBackground(background, new ResponseStore(deps.db));
}

function backgroundDeps(deps: ResponsesDeps): BackgroundDeps | undefined {
  if (!deps.jobs || !deps.secrets) return undefined;
  return { ...deps, jobs: deps.jobs, secrets: deps.secrets };
}

type CreateBody = CreateResponseData['body'];

function requireScope(principal: Principal, model: string): void {
  const scope = model === 'agents' ? 'agents' : 'chat';
  if (!principal.scopes.includes(scope)) {
    throw new PermissionDeniedError(
      'insufficient_scope',
      `This key lacks the scope '${scope}' needed for POST /v1/responses with model '${model}'.`,
    );
  }
}

function bearerOf(req: Request): string {
  return /^Bearer[ ]+(\S+)/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
}

/** The request's tools as the response shows them: the secrets of mcp tools left out. */
function shownTools(body: CreateBody): Response['tools'] {
  return (body.tools ?? []).map((tool) => {
    if (tool.type !== 'mcp') return tool;
    const shown = { ...tool };
    delete shown.headers;
    delete shown.authorization;
    return shown;
  });
}

/** The id of the conversation the request continues, if any. */
function conversationOf(body: CreateBody): string | undefined {
  const named = body.conversation;
  if (named === undefined || named === null) return undefined;
  return typeof named === 'string' ? named : named.id;
}

function initialResponse(body: CreateBody): Response {
  return {
    id: newId('resp'),
    object: 'response',
    created_at: nowSeconds(),
    completed_at: null,
    status: 'in_progress',
    model: body.model,
    output: [],
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    metadata: body.metadata ?? null,
    parallel_tool_calls: body.parallel_tool_calls !== false,
    tool_choice: body.tool_choice ?? 'auto',
    tools: shownTools(body),
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    text: body.text ?? { format: { type: 'text' } },
    truncation: 'disabled',
    background: body.background === true,
    store: body.store !== false,
    previous_response_id: body.previous_response_id ?? null,
    conversation: conversationOf(body) === undefined ? null : { id: conversationOf(body) as string },
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    ...(body.user === undefined ? {} : { user: body.user }),
    usage: null,
    steps: null,
  };
}

/** A Responses stream event: named by its type, the whole event as its data. */
const sendEvent = (stream: SseWriter, event: StreamEvent) => stream.send(event, event.type);

export function createResponsesRouter(deps: ResponsesDeps) {
  const api: OperationRouter = operationRouter();
  const store = new ResponseStore(deps.db);
  const conversations = new ConversationStore(deps.db);

  api.on('createResponse', async ({ body, req, res, principal }) => {
    const started = Date.now();
    const caller = principal();
    requireScope(caller, body.model);
    const format = body.text?.format;
    if (format?.type === 'json_schema') assertJsonSchema(format.schema, 'text.format.schema');
    (body.tools ?? []).forEach((tool, i) => {
      if (tool.type === 'function' && tool.parameters)
        assertJsonSchema(tool.parameters, `tools[${i}].parameters`);
    });
    if (body.background === true && body.store === false) {
      throw new BadRequestError('validation_failed', 'background: true needs store: true.', {
        param: 'background',
      });
    }
    const background = body.background === true ? backgroundDeps(deps) : undefined;
    if (body.background === true && background === undefined) {
      throw new BadRequestError(
        'background_unavailable',
        'background: true needs SECRETS_ENCRYPTION_KEY on this deployment (the request is sealed at rest while it waits); send the request without it.',
        { param: 'background' },
      );
    }
    if (background !== undefined && body.stream === true) {
      throw new BadRequestError(
        'validation_failed',
        'A background response is not streamed by the request that creates it: stream it with GET /v1/responses/{id}?stream=true.',
        { param: 'stream' },
      );
    }
    assertTools(body);
    for (const tool of body.tools ?? []) {
      if (tool.type !== 'mcp') continue;
      if (deps.mcp === undefined) {
        throw new BadRequestError('mcp_unavailable', 'mcp tools are not available on this deployment.', {
          param: 'tools',
        });
      }
      await deps.mcp.check(tool, caller);
    }

    // the conversation: the chain of previous responses, then this input
    let context: HistoryItem[] = [];
    const conversationId = conversationOf(body);
    if (conversationId !== undefined) {
      if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
        throw new BadRequestError(
          'validation_failed',
          'conversation and previous_response_id cannot be used together: a conversation already holds the earlier turns.',
          { param: 'conversation' },
        );
      }
      if (body.store === false) {
        throw new BadRequestError(
          'validation_failed',
          'A response that continues a conversation needs store: true.',
          {
            param: 'store',
          },
        );
      }
      context = await conversations.history(caller, conversationId).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) {
          throw new NotFoundError(
            'not_found',
            `No conversation with id '${conversationId}' exists in this project.`,
            {
              param: 'conversation',
            },
          );
        }
        throw err;
      });
    } else if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
      const previous = await store.find(caller, body.previous_response_id);
      if (previous === undefined) {
        throw new BadRequestError(
          'previous_response_not_found',
          `No stored response with id '${body.previous_response_id}' exists in this project.`,
          { param: 'previous_response_id' },
        );
      }
      context = [...previous.context, ...previous.body.output];
    }
    const items = inputItems(
      body.input,
      await resolveReferences({ responses: store, conversations }, caller, body.input),
    );
    if (items.length === 0 && context.length === 0) {
      throw new BadRequestError('validation_failed', 'Give an input (or a previous_response_id).', {
        param: 'input',
      });
    }
    const history = [...context, ...items];
    assertOutputsAnswerCalls(history);
    const model = textModelOf(body);
    const promptTokens = await firstCallTokens(body, history, model);
    await takeModelTokens(
      deps.limiter,
      res,
      caller,
      model,
      promptTokens + (body.max_output_tokens ?? 0),
      deps.limits,
    );

    if (background !== undefined) {
      const queued: Response = { ...initialResponse(body), status: 'queued' };
      await enqueueBackground(
        background,
        store,
        caller,
        { body: queued, inputItems: items, context, background: true },
        body,
        bearerOf(req),
      );
      return { status: 200, body: queued };
    }

    const client = watchDisconnect(res);
    const streamed = body.stream === true;
    let stream: SseWriter | undefined;
    const builder = new ResponseBuilder(
      initialResponse(body),
      streamed ? (event) => stream && sendEvent(stream, event) : undefined,
    );
    const stored = body.store !== false;
    if (stored) {
      await store.insert(caller, { body: builder.response, inputItems: items, context, background: false });
    }
    const finish = async (result: RunResult | undefined, status: number) => {
      if (stored) await store.update(caller, builder.response);
      await extendConversation(conversations, caller, builder.response, items);
      await recordUsageBatched(deps.db, caller, {
        service: 'model',
        model: body.model,
        endpoint: '/v1/responses',
        inputTokens: result?.inputTokens ?? 0,
        outputTokens: result?.outputTokens ?? 0,
        ...(body.model === 'agents' ? { steps: result?.steps.length ?? 0 } : {}),
        costNano: result?.costNano ?? 0,
        status,
        latencyMs: Date.now() - started,
        streamed,
        disconnected: client.left,
      }).catch((err: unknown) => deps.logger.error({ err }, 'usage record failed'));
    };
    if (streamed) stream = openSse(res, { keepAliveMs: deps.keepAliveMs });
    builder.lifecycle('response.created');
    builder.lifecycle('response.in_progress');
    const partial: RunResult = { inputTokens: 0, outputTokens: 0, steps: [], costNano: 0 };
    try {
      const result = await runResponse(deps, {
        request: body,
        principal: caller,
        bearer: bearerOf(req),
        history,
        builder,
        signal: client.signal,
        progress: partial,
      });
      builder.end(builder.response.status === 'incomplete' ? 'response.incomplete' : 'response.completed');
      await finish(result, 200);
      if (!streamed) return { status: 200, body: builder.response };
      return SENT;
    } catch (err) {
      if (client.left || isAbort(err)) {
        finishResponse(builder, body, partial, 'cancelled');
        await finish(partial, 499);
        return SENT;
      }
      if (!(err instanceof ApiError)) deps.logger.error({ err }, 'response failed');
      finishResponse(builder, body, partial, 'failed');
      builder.response.error = responseErrorOf(err);
      if (!streamed) {
        await finish(partial, err instanceof ApiError ? err.status : 500);
        throw err;
      }
      builder.end('response.failed');
      await finish(partial, 200);
      return SENT;
    } finally {
      stream?.end();
    }
  });

  api.on('getResponse', async ({ path, query, res, principal }) => {
    const found = await store.get(principal(), path.id);
    const streamed = query?.stream === true || (query?.stream as unknown) === 'true';
    if (!streamed) return { status: 200, body: found.body };
    const running = (body: Response) => body.status === 'in_progress' || body.status === 'queued';
    if (running(found.body) && !found.background) {
      throw new BadRequestError(
        'response_not_finished',
        `Response '${path.id}' is still running; its events are streamed to the request that created it.`,
        { param: 'stream' },
      );
    }
    const after = query?.starting_after === undefined ? -1 : Number(query.starting_after);
    const stream = openSse(res, { keepAliveMs: deps.keepAliveMs });
    if (!found.background) {
      for (const event of replayEvents(found.body))
        if (event.sequence_number > after) sendEvent(stream, event);
      stream.end();
      return SENT;
    }
    // a background response: its events as its run writes them (background.ts), followed live
    // while it runs, from `starting_after`; keep-alive comments while nothing comes
    const ENDINGS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);
    const deadline = Date.now() + 15 * 60_000;
    let last = after;
    let ended = false;
    while (!stream.closed && !ended && Date.now() < deadline) {
      const events = await store.eventsAfter(path.id, last);
      for (const event of events) {
        sendEvent(stream, event);
        last = event.sequence_number;
        if (ENDINGS.has(event.type)) ended = true;
      }
      if (ended || events.length > 0) continue;
      const now = (await store.find(principal(), path.id))?.body;
      if (now === undefined) break; // deleted meanwhile
      if (!running(now)) {
        // ended without events of its run (cancelled while queued, or run before they were kept):
        // the events its stored body makes
        const more = await store.eventsAfter(path.id, last);
        const replay = more.length > 0 ? more : replayEvents(now).filter((e) => e.sequence_number > last);
        for (const event of replay) sendEvent(stream, event);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    stream.end();
    return SENT;
  });

  api.on('deleteResponse', async ({ path, principal }) => {
    await store.delete(principal(), path.id);
    return { status: 200, body: { id: path.id, object: 'response.deleted', deleted: true } };
  });

  api.on('cancelResponse', async ({ path, principal }) => {
    const found = await store.get(principal(), path.id);
    if (!found.background) {
      throw new BadRequestError(
        'not_cancellable',
        `Response '${path.id}' was not created with background: true; only background responses can be cancelled.`,
        { param: 'id' },
      );
    }
    const cancelled = await store.cancel(principal(), path.id);
    return { status: 200, body: cancelled ?? found.body };
  });

  api.on('listInputItems', async ({ path, query, req, principal }) => {
    const found = await store.get(principal(), path.id);
    const ordered = query?.order === 'asc' ? found.inputItems : [...found.inputItems].reverse();
    const limit = query?.limit ?? 20;
    let start = 0;
    const cursor = decodeCursor(query?.cursor);
    const afterId = cursor?.id ?? query?.after;
    if (afterId !== undefined) {
      const at = ordered.findIndex((item) => item.id === afterId);
      if (at < 0) {
        throw new BadRequestError(
          cursor !== undefined ? 'invalid_cursor' : 'validation_failed',
          cursor !== undefined
            ? 'The cursor was not issued by this endpoint.'
            : `No input item '${afterId}' in response '${path.id}'.`,
          { param: cursor !== undefined ? 'cursor' : 'after' },
        );
      }
      start = at + 1;
    }
    const data = ordered.slice(start, start + limit);
    const hasMore = start + limit < ordered.length;
    const last = data.at(-1);
    const page: ResponseItemList = {
      object: 'list',
      data,
      has_more: hasMore,
      next_cursor:
        hasMore && last !== undefined ? encodeCursor({ k: start + data.length, id: last.id }) : null,
      first_id: data[0]?.id ?? null,
      last_id: last?.id ?? null,
    };
    return { status: 200, body: page, headers: nextLinkOf(req, page) };
  });

  return api;
}
