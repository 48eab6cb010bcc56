// What each status component's probe does (src/status/components.ts says it in words): a real
// small call through the service's own code, never through its routes, so nothing is metered,
// billed or counted against a customer's rate limit; and the service's own /readyz over HTTP,
// through the outbound guard. server.ts runs them every 30 s (src/status/status.ts).
import type { EngineSelector, MediaEngines } from '../model/engines/select.ts';
import { UpstreamImageEngine } from '../model/engines/media-upstream.ts';
import { UpstreamEngine } from '../model/engines/upstream.ts';
import { imageRequest } from '../model/images-routes.ts';
import type { Db } from '../platform/db.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Outbound } from '../platform/outbound.ts';
import type { MailTransport } from '../mail/transport.ts';
import { geocode, getPlaceDetails } from '../directory/places.ts';
import type { Search } from '../directory/search/search.ts';
import type { ComponentId } from '../status/status.ts';
import { allOf, httpReady, queueRoundTrip } from '../status/status.ts';

export type Probes = Partial<Record<ComponentId, () => Promise<void>>>;

const TIMEOUT_MS = 5_000;

/** One short chat completion by the engine of `model`: every event read, an error thrown. */
function chatOnce(engines: EngineSelector, model: 'prince' | 'queen'): () => Promise<void> {
  return async () => {
    const engine = engines(model);
    // an operator's upstream is only connected to: a completion every 30 s on every instance would
    // spend its tokens and rate limit
    if (engine instanceof UpstreamEngine) return engine.reachable(AbortSignal.timeout(TIMEOUT_MS));
    const events = engine.chat(
      {
        model,
        messages: [{ role: 'user', content: 'Status check: answer briefly.' }],
        max_completion_tokens: 8,
      },
      { signal: AbortSignal.timeout(TIMEOUT_MS), whole: true },
    );
    let finished = false;
    for await (const event of events) {
      if (event.type === 'error') throw new Error(event.error.message);
      if (event.type === 'finish') finished = true;
    }
    if (!finished) throw new Error(`the engine of ${model} ended without finishing`);
  };
}

export function modelProbes(deps: { engines: EngineSelector; media: MediaEngines; jobs: Jobs }): Probes {
  const image = imageRequest({ model: 'imagine', prompt: 'status', size: '256x256', quality: 'low' });
  return {
    chat: allOf({ chat: chatOnce(deps.engines, 'prince') }),
    media: allOf({
      imagine: async () => {
        if (deps.media.image instanceof UpstreamImageEngine)
          return deps.media.image.reachable(AbortSignal.timeout(TIMEOUT_MS));
        for await (const painted of deps.media.image.generate(image, AbortSignal.timeout(TIMEOUT_MS)))
          if (painted.bytes.length === 0) throw new Error('an empty image');
      },
    }),
    agents: allOf({ queue: queueRoundTrip(deps.jobs), queen: chatOnce(deps.engines, 'queen') }),
  };
}

export function directoryProbes(deps: {
  db: Db;
  search: Search;
  transport: MailTransport;
  jobs: Jobs;
  door: Outbound;
  modelUrl: () => string;
  baseUrl: () => string;
}): Probes {
  const queue = queueRoundTrip(deps.jobs);
  let listing: string | undefined;
  return {
    search: allOf({
      search: async () => {
        const page = await deps.search.search({ q: 'Bäckerei', limit: 1 }, new Date(), {
          baseUrl: deps.baseUrl(),
        });
        listing = page.data[0]?.listing.id ?? listing;
      },
    }),
    places: allOf({
      geocode: async () => {
        const found = await geocode(deps.db, 'Berlin', { limit: 1 });
        if (found.data.length === 0) throw new Error('no place found for Berlin');
      },
      details: async () => {
        if (listing !== undefined)
          await getPlaceDetails(deps.db, listing, new Date(), { baseUrl: deps.baseUrl() });
      },
    }),
    sales: allOf({
      queue,
      mail: () => deps.transport.greet(TIMEOUT_MS),
    }),
    concierge: allOf({ queue, 'model API': () => httpReady(deps.door, deps.modelUrl())() }),
  };
}

/** Each probe after its service's own /readyz over HTTP (through the guard). */
export function withReadiness(door: Outbound, url: string, probes: Probes): Probes {
  const ready = allOf({ readyz: httpReady(door, url) });
  return Object.fromEntries(
    Object.entries(probes).map(([id, probe]) => [
      id,
      async () => {
        await ready();
        await probe();
      },
    ]),
  );
}
