// The public status page: each interface of both services (the seeds' Search, Places, Sales and
// Concierge with their SLAs, and the Model API's chat, media and agents) probed by the service
// itself every 30 s once ready, by a real small call through its own code; stored one row per
// component and slot (several instances keep one history), uptime per day and over 30 and 90
// days against the SLA, a component that fails shown down while the others stay up.
import { type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailTransport } from '../src/mail/transport.ts';
import { outbound } from '../src/platform/outbound.ts';
import { renderStatus } from '../src/status/pages.ts';
import { probeOnce, SLOT_SECONDS, statusSummary } from '../src/status/status.ts';
import { type Storage, startTestServers, storages, type TestServers } from './support/server.ts';

interface Summary {
  status: string;
  components: Array<{
    id: string;
    name: string;
    service: string;
    status: string;
    detail: string | null;
    probe: string;
    uptime_30d: number | null;
    sla: number;
    latency_ms: number | null;
    days: Array<{ date: string; uptime: number | null }>;
  }>;
}

/** The seeds' interfaces and SLAs (the directory document's; the model document names none). */
const SEED = [
  ['chat', 'model', 99.9],
  ['media', 'model', 99.9],
  ['agents', 'model', 99.9],
  ['search', 'directory', 99.9],
  ['places', 'directory', 99.9],
  ['sales', 'directory', 99.5],
  ['concierge', 'directory', 99.5],
];

/** A mail relay that greets and accepts nothing: what the sales probe's EHLO reaches. */
async function relay(): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const STORAGES = await storages();

describe.each(STORAGES)('status page on %s', (storage: Storage) => {
  let servers: TestServers;
  let base: string;
  let mail: Awaited<ReturnType<typeof relay>>;

  beforeAll(async () => {
    mail = await relay();
    servers = await startTestServers(storage, { env: { SMTP_URL: `smtp://127.0.0.1:${mail.port}` } });
    await servers.ready;
    base = servers.urls.model as string;
  });
  afterAll(async () => {
    await servers?.stop();
    await mail?.close();
  });

  it('shows every interface of the seeds up with its SLA, in JSON and in HTML, on both services', async () => {
    let summary: Summary | undefined;
    await expect
      .poll(
        async () => {
          summary = (await (await fetch(`${base}/status.json`)).json()) as Summary;
          // the first probes of the components are stored one by one: wait for all of them
          const probed = summary.components.every((c) => c.days.at(-1)?.uptime !== null);
          if (!probed) return 'waiting for every first probe';
          const down = summary.components.filter((c) => c.status !== 'operational');
          return down.length === 0 ? summary.status : down.map((c) => `${c.id}: ${c.detail}`).join('; ');
        },
        { timeout: 10_000 },
      )
      .toBe('operational');
    expect(summary?.components.map((c) => [c.id, c.service, c.sla])).toEqual(SEED);
    expect(summary?.components.every((c) => c.status === 'operational' && c.detail === null)).toBe(true);
    expect(summary?.components.every((c) => c.probe.length > 0 && c.latency_ms !== null)).toBe(true);
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
    for (const c of summary?.components ?? []) {
      expect(text).toContain(`<h2 id="c-${c.id}">${c.name} <span class="service">`);
      expect(text).toContain(`SLA ${c.sla} %.`);
    }
    expect(text).toContain('SLA 99.5 %.');
    expect(text).not.toContain('<script');
    const directory = await fetch(`${servers.urls.directory}/status.json`);
    expect(((await directory.json()) as Summary).status).toBe('operational');
  });

  it('records the interface whose dependency broke down, the others up: the mail relay refusing', async () => {
    await mail.close(); // the relay stops: connections to its port are refused
    const next = Date.now() + SLOT_SECONDS * 1000; // the next slot, which no timer has probed yet
    await probeOnce(servers.platform.db, servers.components, next);
    const summary = await statusSummary(servers.platform.db, servers.components, next);
    expect(summary.status).toBe('degraded');
    expect(summary.components.map((c) => [c.id, c.status])).toEqual(
      SEED.map(([id]) => [id, id === 'sales' ? 'down' : 'operational']),
    );
    const sales = summary.components.find((c) => c.id === 'sales');
    expect(sales?.detail).toMatch(/^mail: smtp 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    const html = renderStatus(summary);
    expect(html).toContain('Some systems are down');
    expect(html).toContain('Last probe failed: mail: smtp 127.0.0.1:');
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
    const now = Date.UTC(2026, 0, 15, 0, 0, 10); // the first slot of a day
    const component = { id: 'flaky', name: 'Flaky', sla: 99.9 };
    const fail = {
      ...component,
      probe: async () => {
        throw new Error('connection refused');
      },
    };
    const ok = { ...component, probe: async () => undefined };
    // The day before's last four slots: 3 up, 1 down; now: down.
    const yesterday = now - 4 * SLOT_SECONDS * 1000;
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

  // Regression (issue 27): a 70 s restart left no probe rows, and missing rows counted as up, so
  // the page said 100.000 % with an outage in it; uptime over minutes of history read as 30 days.
  it('counts the half-minutes with no probe as not up, and says how long the history is', async () => {
    const now = Date.UTC(2026, 0, 15, 12, 0, 10);
    const component = { id: 'restarted', name: 'Restarted', sla: 99.9 };
    const ok = { ...component, probe: async () => undefined };
    const fail = {
      ...component,
      probe: async () => {
        throw new Error('connection refused');
      },
    };
    const at = (slotsAgo: number) => now - slotsAgo * SLOT_SECONDS * 1000;
    // up, up, up, down, then stopped for three minutes (six slots, no rows), then up again
    for (const ago of [10, 9, 8]) await probeOnce(servers.platform.db, [ok], at(ago));
    await probeOnce(servers.platform.db, [fail], at(7));
    await probeOnce(servers.platform.db, [ok], now);
    const summary = await statusSummary(servers.platform.db, [component], now);
    const [restarted] = summary.components;
    expect(restarted?.status).toBe('operational');
    // 4 of the 11 slots since the first probe were probed and up
    expect(restarted?.days.at(-1)).toMatchObject({ probes: 5, failures: 1, missing: 6, uptime: 36.364 });
    expect(restarted?.uptime_30d).toBe(36.364);
    expect(restarted?.since).toBe(Math.floor(at(10) / 1000 / SLOT_SECONDS) * SLOT_SECONDS);
    const html = renderStatus(summary);
    expect(html).toContain('Uptime 36.364 % since 2026-01-15 11:55 UTC (5 minutes of history)');
    expect(html).not.toContain('over 30 days');
    expect(html).toContain('6 half-minutes with no probe, counted as not up');
  });

  it('shows the incidents the operator posts, escaped, and refuses any other account', async () => {
    const post = (key: string, body: unknown, path = '/v1/incidents', method = 'POST') =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const { accountId } = await servers.platform.accounts.createAccount('a customer');
    const customer = await servers.platform.accounts.createKey(accountId, {
      name: 'admin',
      scopes: ['admin'],
    });
    const incident = {
      title: 'Slow <script>alert(1)</script> searches',
      impact: 'minor',
      components: ['search'],
    };
    const refused = await post(customer.secret, incident);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('operator_only');

    const created = await post(servers.adminKey, { ...incident, body: 'We are adding capacity.' });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const summary = (await (await fetch(`${base}/status.json`)).json()) as {
      incidents: Array<{ id: string; resolved_at: number | null }>;
    };
    expect(summary.incidents.map((i) => [i.id, i.resolved_at])).toEqual([[id, null]]);
    const html = await (await fetch(`${servers.urls.directory}/status`)).text();
    expect(html).toContain('Slow &#60;script&#62;alert(1)&#60;/script&#62; searches');
    expect(html).not.toContain('<script>');

    expect((await post(customer.secret, { resolved: true }, `/v1/incidents/${id}`, 'PATCH')).status).toBe(
      403,
    );
    const resolved = await post(servers.adminKey, { resolved: true }, `/v1/incidents/${id}`, 'PATCH');
    expect(((await resolved.json()) as { resolved_at: number | null }).resolved_at).toBeGreaterThan(0);
    expect(await (await fetch(`${base}/status`)).text()).toContain('resolved');
    const missing = await post(
      servers.adminKey,
      { resolved: true },
      '/v1/incidents/inc_01JD8W3V6Q2M4T7Y9ZBC5XEFGZ',
      'PATCH',
    );
    expect(missing.status).toBe(404);
  });
});

describe('the sales probe reaches the mail relay through the outbound guard', () => {
  it('greets a relay on the operator’s own network, and refuses the cloud metadata address', async () => {
    const door = outbound({ allowPrivate: false });
    const mail = await relay();
    try {
      const greet = (url: string) =>
        createMailTransport({
          smtpUrl: url,
          outboxDir: '/nonexistent',
          addressOf: (host) => door.address(host, 'operator'),
        }).greet(2000);
      await expect(greet(`smtp://localhost:${mail.port}`)).resolves.toBeUndefined();
      // link-local is refused for every origin: no connection is opened at all
      await expect(greet('smtp://169.254.169.254:25')).rejects.toThrow(
        /169\.254\.169\.254 is a linkLocal address/,
      );
    } finally {
      await mail.close();
      await door.close();
    }
  });
});
