// `background: true`: a response runs as a durable job (platform/jobs.ts), not in the request
// that created it. The request and the caller's bearer key (the hub calls the directory with it;
// mcp tools may carry headers) are sealed at rest with the secrets key. The job runs the response
// on whichever instance claims it; a job whose instance was killed is claimed again after its
// heartbeat lapses and runs the response again from its start (nothing of the lost run was
// billed: usage is recorded when a run ends). A cancel marks the row; the run looks every second
// and stops, keeping and billing what it did. The run's `response.*` events are written as they
// come (every quarter second), so a stream opened while it runs follows it live from any
// sequence number (routes.ts); a run started again writes its events again from 0.
import type { CreateResponseRequest } from '../../generated/model/client/types.gen.ts';
import type { Queryable } from '../platform/db.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { Principal } from '../platform/principal.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { recordUsageBatched } from '../platform/metering.ts';
import type { Db } from '../platform/db.ts';
import { ConversationStore, extendConversation } from './conversations.ts';
import { ResponseBuilder, type StreamEvent } from './events.ts';
import { finishResponse, responseErrorOf, type RunResult, runResponse, type RuntimeDeps } from './runtime.ts';
import type { ResponseStore, StoredResponse } from './store.ts';

export const BACKGROUND = 'responses.background';

interface Sealed {
  request: CreateResponseRequest;
  bearer: string;
}

export interface BackgroundDeps extends RuntimeDeps {
  db: Db;
  jobs: Jobs;
  secrets: SecretBox;
  logger: Logger;
}

/** Stores a queued background response and its job, in one transaction. */
export async function enqueueBackground(
  deps: BackgroundDeps,
  store: ResponseStore,
  principal: Principal,
  stored: StoredResponse,
  request: CreateResponseRequest,
  bearer: string,
): Promise<void> {
  const sealedRequest = deps.secrets.seal(
    JSON.stringify({ request, bearer } satisfies Sealed),
    stored.body.id,
  );
  await deps.db.transaction(async (tx: Queryable) => {
    await store.insert(principal, stored, { sealedRequest, tx });
    await deps.jobs.send(BACKGROUND, { id: stored.body.id }, { tx });
  });
}

/** Declares the queue of background responses and the handler this instance runs for it. */
export async function defineBackground(deps: BackgroundDeps, store: ResponseStore): Promise<void> {
  await deps.jobs.define<{ id: string }>(BACKGROUND, (job) => runBackground(deps, store, job.id), {
    concurrency: 8,
    // a run is bounded by its model calls and tool calls; one that outlives an hour was lost
    expireInSeconds: 3600,
    retryLimit: 2,
  });
}

async function runBackground(deps: BackgroundDeps, store: ResponseStore, id: string): Promise<void> {
  const stored = await store.background(id);
  // gone (deleted), or ended (completed, failed, cancelled) by an earlier attempt or a cancel
  if (!stored || (stored.body.status !== 'queued' && stored.body.status !== 'in_progress')) return;
  const { request, bearer } = JSON.parse(deps.secrets.open(stored.sealedRequest, id)) as Sealed;
  const principal = stored.principal;
  const started = Date.now();
  // from the start: a run that an instance lost is run again, its partial output dropped
  await store.clearEvents(id);
  const pending: StreamEvent[] = [];
  let written: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    const batch = pending.splice(0);
    if (batch.length > 0) {
      written = written
        .then(() => store.appendEvents(id, batch))
        .catch((err: unknown) => deps.logger.warn({ err, response_id: id }, 'response events not written'));
    }
    return written;
  };
  const flusher = setInterval(() => void flush(), 250);
  const builder = new ResponseBuilder({ ...stored.body, status: 'in_progress', output: [] }, (event) => {
    pending.push(event);
  });
  await store.update(principal, builder.response);
  builder.lifecycle('response.created');
  builder.lifecycle('response.in_progress');
  const controller = new AbortController();
  const watch = setInterval(() => {
    store.status(id).then(
      (status) => {
        if (status === 'cancelled') controller.abort(new DOMException('Cancelled.', 'AbortError'));
      },
      () => undefined,
    );
  }, 1000);
  const partial: RunResult = { inputTokens: 0, outputTokens: 0, steps: [], costNano: 0 };
  let result: RunResult = partial;
  let status = 200;
  try {
    result = await runResponse(deps, {
      request,
      principal,
      bearer,
      history: [...stored.context, ...stored.inputItems],
      builder,
      signal: controller.signal,
      progress: partial,
    });
    builder.end(builder.response.status === 'incomplete' ? 'response.incomplete' : 'response.completed');
  } catch (err) {
    if (controller.signal.aborted) {
      finishResponse(builder, request, partial, 'cancelled');
      status = 499;
    } else {
      deps.logger.warn({ err, response_id: id }, 'background response failed');
      finishResponse(builder, request, partial, 'failed');
      builder.response.error = responseErrorOf(err);
    }
    // the stream's last event: a cancelled response ends as replayEvents ends one
    builder.end('response.failed');
  } finally {
    clearInterval(watch);
    clearInterval(flusher);
  }
  await flush();
  await store.update(principal, builder.response);
  await extendConversation(new ConversationStore(deps.db), principal, builder.response, stored.inputItems);
  await recordUsageBatched(deps.db, principal, {
    service: 'model',
    model: request.model,
    endpoint: '/v1/responses',
    inputTokens: result.inputTokens,
    outputTokens: result.outputTokens,
    ...(request.model === 'agents' ? { steps: result.steps.length } : {}),
    costNano: result.costNano,
    status,
    latencyMs: Date.now() - started,
    streamed: false,
    disconnected: false,
  });
}
