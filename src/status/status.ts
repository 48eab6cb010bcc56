// The public status: each component (an interface of a service: components.ts) probed every 30 s
// by the service itself with a real small call through its own code, each result stored in one
// row per component and 30-second slot (the first instance to probe a slot writes it, so several
// instances or workers keep one history), and summed into uptime per day and over 30 and 90 days
// against the SLA: over the slots since the first probe, a slot without one (the service was
// stopped) counting as not up. Probing is an idempotent handler (`probeOnce`) run by a timer in
// each instance: the slot's row is written once, whoever probes first, so no job is needed.
import type { StatusComponent } from '../../generated/model/client/types.gen.ts';
import type { Db } from '../platform/db.ts';
import type { Jobs } from '../platform/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { Outbound } from '../platform/outbound.ts';

export const SLOT_SECONDS = 30;
/** How far into its slot a round of probes starts. */
const ROUND_OFFSET_MS = 5_000;
const DAY = 86_400;
const PROBE_TIMEOUT_MS = 5_000;

export type ComponentId = StatusComponent['id'];

/** What the page says of a component: its id, name, service, SLA and what its probe does. */
export interface ComponentInfo {
  id: string;
  name: string;
  service?: StatusComponent['service'];
  /** The uptime promised, in percent (99.9 % Search and Places). */
  sla: number;
  /** What the probe does, as a sentence. */
  does?: string;
}

export interface Component extends ComponentInfo {
  /** Resolves when the component answers as it should; throws (or times out) when not. */
  probe(): Promise<void>;
}

/**
 * A service's own /readyz as a client reaches it, through the outbound guard as an address of the
 * operator's (the service's own address is loopback, which only that origin may reach).
 */
export function httpReady(door: Outbound, url: string): () => Promise<void> {
  return async () => {
    const call = door.open(new URL('/readyz', url), {
      method: 'GET',
      headers: {},
      origin: 'operator',
      connectTimeoutMs: PROBE_TIMEOUT_MS,
      firstByteTimeoutMs: PROBE_TIMEOUT_MS,
      totalTimeoutMs: PROBE_TIMEOUT_MS,
      maxBodyBytes: 4096,
    });
    try {
      const { status } = await call.response;
      // read to its end: the connection goes back to the pool
      for await (const chunk of call.body()) void chunk;
      if (status !== 200) throw new Error(`${url}/readyz answered ${status}`);
    } catch (err) {
      throw call.cause(err);
    } finally {
      call.close();
    }
  };
}

const PROBE_QUEUE = 'status.probe';
const queues = new WeakMap<Jobs, Promise<void>>();

/**
 * A job through the queue and back: sent, claimed by a worker of any instance that shares the
 * queue, completed. Every caller within a slot shares one round trip (memoised per 30-s slot).
 */
export function queueRoundTrip(jobs: Jobs): () => Promise<void> {
  let last: { slot: number; trip: Promise<void> } | undefined;
  const trip = async () => {
    let defined = queues.get(jobs);
    if (!defined) {
      defined = jobs.define(PROBE_QUEUE, async () => undefined, {
        retryLimit: 0,
        expireInSeconds: 30,
        keepSeconds: 3600,
      });
      queues.set(jobs, defined);
    }
    await defined;
    const id = await jobs.send(PROBE_QUEUE, {});
    const until = Date.now() + PROBE_TIMEOUT_MS;
    for (let wait = 20; Date.now() < until; wait = Math.min(wait * 2, 250)) {
      const state = (await jobs.get(PROBE_QUEUE, id))?.state;
      if (state === 'completed') return;
      if (state === 'failed' || state === 'cancelled') throw new Error(`the queue's probe job ${state}`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    await jobs.cancel(PROBE_QUEUE, id).catch(() => undefined);
    throw new Error('no worker ran a job of the queue within 5 s');
  };
  return () => {
    const slot = Math.floor(Date.now() / 1000 / SLOT_SECONDS);
    if (last?.slot !== slot) last = { slot, trip: trip() };
    return last.trip;
  };
}

/** Every check in turn; the first that fails fails the probe, its message prefixed by its name. */
export function allOf(checks: Record<string, () => Promise<unknown>>): () => Promise<void> {
  return async () => {
    for (const [name, check] of Object.entries(checks)) {
      try {
        await check();
      } catch (err) {
        throw new Error(`${name}: ${String((err as Error).message ?? err)}`);
      }
    }
  };
}

/** Probes every component for the slot of `now`; a slot already written is left as it is. */
export async function probeOnce(db: Db, components: Component[], now = Date.now()): Promise<void> {
  const slot = Math.floor(now / 1000 / SLOT_SECONDS);
  await Promise.all(
    components.map(async (component) => {
      const started = performance.now();
      let ok = true;
      let detail: string | null = null;
      try {
        await Promise.race([
          component.probe(),
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error('no answer within 5 s')), PROBE_TIMEOUT_MS).unref(),
          ),
        ]);
      } catch (err) {
        ok = false;
        detail = String((err as Error).message ?? err).slice(0, 300);
      }
      await db.query(
        `insert into status_probes (component, slot, ok, latency_ms, detail) values ($1, $2, $3, $4, $5)
         on conflict (component, slot) do nothing`,
        [component.id, slot, ok, Math.round(performance.now() - started), detail],
      );
    }),
  );
}

/**
 * Probes at once, then once in each 30 s slot, until stopped. A failed write is logged, never
 * thrown. The first round only warms what a first call loads (the tokenizer, the image workers,
 * the search index: seconds on a busy machine) and is not stored.
 */
export function startProber(db: Db, components: Component[], logger: Logger): { stop(): void } {
  const run = () =>
    probeOnce(db, components).catch((err: unknown) => logger.warn({ err }, 'status probe not stored'));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // each round a few seconds into its slot, so a timer fired late (a busy machine) still probes
  // the slot it was meant for; a fixed 30 s interval started near a slot's end skipped one slot
  // now and then, which the page counts as down
  const slotMs = SLOT_SECONDS * 1000;
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => void run().finally(next), slotMs - ((Date.now() - ROUND_OFFSET_MS) % slotMs));
    timer.unref();
  };
  const warm = Promise.allSettled(components.map((c) => c.probe()));
  void warm.then(async () => {
    if (stopped) return;
    await run();
    next();
  });
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

export interface DayUptime {
  date: string;
  /**
   * Percent of the day's slots since the history began that were probed and up (a slot with no
   * probe, e.g. while the service was stopped, is not up), or null when the day had none.
   */
  uptime: number | null;
  probes: number;
  failures: number;
  /** Slots since the history began with no probe stored: the service was not running. */
  missing: number;
}

export interface ComponentStatus {
  id: string;
  name: string;
  service: StatusComponent['service'] | undefined;
  sla: number;
  probe: string;
  status: 'operational' | 'down' | 'unknown';
  /** Why the last probe failed, or null. */
  detail: string | null;
  uptime_30d: number | null;
  uptime_90d: number | null;
  meets_sla_30d: boolean | null;
  /** When the history of probes begins (the first in 90 days): uptime is over no more than that. */
  since: number | null;
  last_probe: number | null;
  latency_ms: number | null;
  days: DayUptime[];
}

export interface Incident {
  object?: 'incident';
  id: string;
  title: string;
  body: string;
  impact: string;
  components: string[];
  created: number;
  resolved_at: number | null;
}

export interface StatusSummary {
  object: 'status';
  status: 'operational' | 'degraded' | 'unknown';
  updated: number;
  components: ComponentStatus[];
  incidents: Incident[];
}

const percent = (up: number, total: number) => (total === 0 ? null : Math.round((up / total) * 1e5) / 1e3);

export async function statusSummary(
  db: Db,
  components: ComponentInfo[],
  now = Date.now(),
): Promise<StatusSummary> {
  const nowS = Math.floor(now / 1000);
  const today = Math.floor(nowS / DAY);
  const firstDay = today - 89;
  const fromSlot = Math.floor((firstDay * DAY) / SLOT_SECONDS);
  const begun = await db.query<{ component: string; first: number }>(
    'select component, min(slot) as first from status_probes where slot >= $1 group by component',
    [fromSlot],
  );
  const nowSlot = Math.floor(nowS / SLOT_SECONDS);
  const latest = await db.query<{
    component: string;
    slot: number;
    ok: boolean;
    latency_ms: number;
    detail: string | null;
  }>(
    `select distinct on (component) component, slot, ok, latency_ms, detail from status_probes
     where slot >= $1 order by component, slot desc`,
    [Math.floor(nowS / SLOT_SECONDS) - 10],
  );
  // the counts are read after the first and the latest probe: a probe stored between the
  // queries then only adds a probe to the counts (never a slot due without its row, read as down)
  const rows = await db.query<{ component: string; day: number; probes: number; failures: number }>(
    `select component, (slot * ${SLOT_SECONDS}) / ${DAY} as day, count(*)::int as probes,
            count(*) filter (where not ok)::int as failures
     from status_probes where slot >= $1 group by 1, 2`,
    [fromSlot],
  );
  const incidents = await db.query<Incident>(
    'select * from status_incidents where created >= $1 order by created desc limit 50',
    [nowS - 90 * DAY],
  );
  const summaries = components.map((component): ComponentStatus => {
    const byDay = new Map(rows.filter((r) => r.component === component.id).map((r) => [Number(r.day), r]));
    const last = latest.find((l) => l.component === component.id);
    const first = begun.find((b) => b.component === component.id);
    // the slots that should hold a probe: from the first to the last due (this one once probed)
    const start = first ? Number(first.first) : undefined;
    const end = last && Number(last.slot) === nowSlot ? nowSlot : nowSlot - 1;
    const slotsPerDay = DAY / SLOT_SECONDS;
    const due = (d: number) =>
      start === undefined
        ? 0
        : Math.max(0, Math.min((d + 1) * slotsPerDay - 1, end) - Math.max(d * slotsPerDay, start) + 1);
    const days: DayUptime[] = [];
    for (let d = firstDay; d <= today; d++) {
      const row = byDay.get(d);
      const probes = row?.probes ?? 0;
      const failures = row?.failures ?? 0;
      const expected = Math.max(due(d), probes);
      days.push({
        date: new Date(d * DAY * 1000).toISOString().slice(0, 10),
        uptime: percent(probes - failures, expected),
        probes,
        failures,
        missing: expected - probes,
      });
    }
    const over = (n: number) => {
      const span = days.slice(-n);
      const up = span.reduce((sum, d) => sum + d.probes - d.failures, 0);
      return percent(
        up,
        span.reduce((sum, d) => sum + d.probes + d.missing, 0),
      );
    };
    const uptime30 = over(30);
    return {
      id: component.id,
      name: component.name,
      service: component.service,
      sla: component.sla,
      probe: component.does ?? '',
      status: last ? (last.ok ? 'operational' : 'down') : 'unknown',
      detail: last && !last.ok ? last.detail : null,
      uptime_30d: uptime30,
      uptime_90d: over(90),
      meets_sla_30d: uptime30 === null ? null : uptime30 >= component.sla,
      since: start === undefined ? null : start * SLOT_SECONDS,
      last_probe: last ? Number(last.slot) * SLOT_SECONDS : null,
      latency_ms: last?.latency_ms ?? null,
      days,
    };
  });
  const states = summaries.map((s) => s.status);
  return {
    object: 'status',
    status: states.every((s) => s === 'operational')
      ? 'operational'
      : states.some((s) => s === 'down')
        ? 'degraded'
        : 'unknown',
    updated: nowS,
    components: summaries,
    incidents: incidents.map((i) => ({
      object: 'incident' as const,
      ...i,
      created: Number(i.created),
      resolved_at: i.resolved_at === null ? null : Number(i.resolved_at),
    })),
  };
}
