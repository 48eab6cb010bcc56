// The public status page: both services probed by themselves every 30 s once ready, stored one
// row per component and slot (several instances keep one history), uptime per day and over 30
// and 90 days against the SLA, a component that fails shown down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeOnce, SLOT_SECONDS, statusSummary } from '../src/status/status.ts';
import { startTestServers, type TestServers } from './support/server.ts';

interface Summary {
  status: string;
  components: Array<{
    id: string;
    status: string;
    uptime_30d: number | null;
    sla: number;
    days: Array<{ date: string; uptime: number | null }>;
  }>;
}

describe('status page', () => {
  let servers: TestServers;
  let base: string;

  beforeAll(async () => {
    servers = await startTestServers('pglite');
    await servers.ready;
    base = servers.urls.model as string;
  });
  afterAll(async () => servers?.stop());

  it('shows both services and storage up, in JSON and in HTML, on both services', async () => {
    let summary: Summary | undefined;
    await expect
      .poll(
        async () => {
          summary = (await (await fetch(`${base}/status.json`)).json()) as Summary;
          return summary.status;
        },
        { timeout: 10_000 },
      )
      .toBe('operational');
    expect(summary?.components.map((c) => [c.id, c.status])).toEqual([
      ['model', 'operational'],
      ['directory', 'operational'],
      ['storage', 'operational'],
    ]);
    const today = new Date().toISOString().slice(0, 10);
    for (const c of summary?.components ?? []) {
      expect(c.days).toHaveLength(90);
      expect(c.days.at(-1)).toMatchObject({ date: today, uptime: 100 });
      expect(c.days[0]?.uptime).toBeNull();
      expect(c.uptime_30d).toBe(100);
    }
    const html = await fetch(`${base}/status`);
    expect(html.headers.get('content-security-policy')).toContain("default-src 'none'");
    const text = await html.text();
    expect(text).toContain('All systems operational');
    expect(text).toContain('Directory API (search and places)');
    expect(text).not.toContain('<script');
    const directory = await fetch(`${servers.urls.directory}/status.json`);
    expect(((await directory.json()) as Summary).status).toBe('operational');
  });

  it('keeps one history: the first probe of a slot stands, another instance adds nothing', async () => {
    const at = Date.UTC(2026, 0, 10, 12, 0, 0);
    const slot = Math.floor(at / 1000 / SLOT_SECONDS);
    const up = { id: 'history', name: 'History', sla: 99.9, probe: async () => undefined };
    const down = {
      ...up,
      probe: async () => {
        throw new Error('refused');
      },
    };
    await probeOnce(servers.platform.db, [up], at);
    await probeOnce(servers.platform.db, [down], at + 1000); // same slot, a second instance
    const rows = await servers.platform.db.query<{ ok: boolean }>(
      'select ok from status_probes where component = $1 and slot = $2',
      ['history', slot],
    );
    expect(rows).toEqual([{ ok: true }]);
  });

  it('counts failures into the day, the 30-day uptime and the SLA, and shows a failing component down', async () => {
    const now = Date.now();
    const component = { id: 'flaky', name: 'Flaky', sla: 99.9 };
    const fail = {
      ...component,
      probe: async () => {
        throw new Error('connection refused');
      },
    };
    const ok = { ...component, probe: async () => undefined };
    // Yesterday: 3 up, 1 down; now: down.
    const yesterday = now - 86_400_000;
    for (let i = 0; i < 3; i++)
      await probeOnce(servers.platform.db, [ok], yesterday + i * SLOT_SECONDS * 1000);
    await probeOnce(servers.platform.db, [fail], yesterday + 3 * SLOT_SECONDS * 1000);
    await probeOnce(servers.platform.db, [fail], now);
    const summary = await statusSummary(servers.platform.db, [component], now);
    const [flaky] = summary.components;
    expect(flaky?.status).toBe('down');
    expect(summary.status).toBe('degraded');
    expect(flaky?.days.at(-2)?.uptime).toBe(75);
    expect(flaky?.days.at(-1)?.uptime).toBe(0);
    expect(flaky?.uptime_30d).toBe(60);
    expect(flaky?.meets_sla_30d).toBe(false);
    const [row] = await servers.platform.db.query<{ detail: string }>(
      'select detail from status_probes where component = $1 and not ok limit 1',
      ['flaky'],
    );
    expect(row?.detail).toBe('connection refused');
  });
});
