// The public status: each component probed every 30 s by the service itself, each result stored
// in one row per component and 30-second slot (the first instance to probe a slot writes it, so
// several instances or workers keep one history), and summed into uptime per day and over 30
// and 90 days against the SLA: over the slots since the first probe, a slot without one (the
// service was stopped) counting as not up. Probing is an idempotent handler (`probeOnce`) run by a timer in
// each instance: the slot's row is written once, whoever probes first, so no job is needed.
import type { Db } from '../platform/db.ts';
import type { Logger } from '../platform/logger.ts';

export const SLOT_SECONDS = 30;
const DAY = 86_400;
const PROBE_TIMEOUT_MS = 5_000;

export interface Component {
  id: string;
  name: string;
  /** The uptime promised, in percent (99.9 % Search and Places). */
  sla: number;
  /** Resolves when the component answers as it should; throws (or times out) when not. */
  probe(): Promise<void>;
}

/** A probe of a service's own /readyz over HTTP, as a client reaches it. */
export function httpReady(url: string): () => Promise<void> {
  return async () => {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}/readyz answered ${res.status}`);
  };
}

export function databaseRoundTrip(db: Db): () => Promise<void> {
  return async () => {
    await db.query('select 1');
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

/** Probes at once, then every 30 s, until stopped. A failed write is logged, never thrown. */
export function startProber(db: Db, components: Component[], logger: Logger): { stop(): void } {
  const run = () =>
    probeOnce(db, components).catch((err: unknown) => logger.warn({ err }, 'status probe not stored'));
  void run();
  const timer = setInterval(run, SLOT_SECONDS * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
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
  status: 'operational' | 'down' | 'unknown';
  sla: number;
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
  components: Array<Pick<Component, 'id' | 'name' | 'sla'>>,
  now = Date.now(),
): Promise<StatusSummary> {
  const nowS = Math.floor(now / 1000);
  const today = Math.floor(nowS / DAY);
  const firstDay = today - 89;
  const fromSlot = Math.floor((firstDay * DAY) / SLOT_SECONDS);
  const rows = await db.query<{ component: string; day: number; probes: number; failures: number }>(
    `select component, (slot * ${SLOT_SECONDS}) / ${DAY} as day, count(*)::int as probes,
            count(*) filter (where not ok)::int as failures
     from status_probes where slot >= $1 group by 1, 2`,
    [fromSlot],
  );
  const begun = await db.query<{ component: string; first: number }>(
    'select component, min(slot) as first from status_probes where slot >= $1 group by component',
    [fromSlot],
  );
  const nowSlot = Math.floor(nowS / SLOT_SECONDS);
  const latest = await db.query<{ component: string; slot: number; ok: boolean; latency_ms: number }>(
    `select distinct on (component) component, slot, ok, latency_ms from status_probes
     where slot >= $1 order by component, slot desc`,
    [Math.floor(nowS / SLOT_SECONDS) - 10],
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
      status: last ? (last.ok ? 'operational' : 'down') : 'unknown',
      sla: component.sla,
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
      ...i,
      created: Number(i.created),
      resolved_at: i.resolved_at === null ? null : Number(i.resolved_at),
    })),
  };
}
