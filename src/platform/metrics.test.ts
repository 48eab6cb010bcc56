// /metrics is the operator's (issue 29, finding 6): on the API ports only with METRICS_KEY as a
// bearer; on the metrics listener (METRICS_PORT, loopback by default) for Prometheus, with the
// series of both services.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { type Running, startServices } from '../services/server.ts';

const METRICS_KEY = 'operator-metrics-key-0123456789abcdef';
let running: Running;

beforeAll(async () => {
  running = await startServices({
    ...loadConfig({
      DATA_DIR: 'memory://',
      DEMO_LISTINGS: '0',
      INBOUND_SMTP_PORT: 'off',
      METRICS_KEY,
      METRICS_PORT: '0',
    }),
    host: '127.0.0.1',
    modelPort: 0,
    directoryPort: 0,
    logLevel: 'silent',
    dataDir: 'memory://',
    bootstrapAdminKey: 'sk_test_metrics_admin_0123456789',
  });
});
afterAll(async () => running?.close());

describe.each(['model', 'directory'] as const)('GET /metrics on the %s API port', (service) => {
  const url = () => `${running.urls[service]}/metrics`;

  it('refuses without the operator key, or with an API key, in the envelope', async () => {
    const none = await fetch(url());
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('missing_metrics_key');
    const wrong = await fetch(url(), {
      headers: { authorization: 'Bearer sk_test_metrics_admin_0123456789' },
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('invalid_metrics_key');
  });

  it('answers the operator key with its own series', async () => {
    const res = await fetch(url(), { headers: { authorization: `Bearer ${METRICS_KEY}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('http_requests_total');
    expect(text).toContain(`service="${service}"`);
  });
});

describe('the metrics listener', () => {
  it('binds loopback by default and serves both services to a scraper without a key', async () => {
    expect(running.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await fetch(`${running.urls.model}/healthz`);
    await fetch(`${running.urls.directory}/healthz`);
    const res = await fetch(`${running.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{[^}]*service="model"/);
    expect(text).toMatch(/http_requests_total\{[^}]*service="directory"/);
    // one TYPE line per metric: a valid exposition for Prometheus
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE http_requests_total '));
    expect(types).toHaveLength(1);
    expect((await fetch(`${running.metricsUrl}/v1/models`)).status).toBe(404);
  });

  it('is off unless METRICS_PORT is set', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: 'off' }).metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' })).toMatchObject({
      metricsPort: 9464,
      metricsHost: '127.0.0.1',
    });
  });
});
