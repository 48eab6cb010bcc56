// The walking skeleton of both services: operational routes, and the failures in the envelope
// that contract-tests/portable/errors.test.ts does not walk (401, 404, 405, 413, 415 and
// invalid JSON are there, for both APIs, on both storages and on a deployment).
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { type Running, startServices } from '../services/server.ts';
import { createServiceApp, readSpec } from './app.ts';
import { createLogger } from './logger.ts';
import { routeMatchers } from './route-cache.ts';

let running: Running;
let model: string;
let directory: string;
const ADMIN = 'sk_test_skeleton_admin_0123456789';
const AUTH = { authorization: `Bearer ${ADMIN}` };

beforeAll(async () => {
  const config = {
    // the inbound SMTP listener on a free port: a fixed one (2525) fails beside another instance
    ...loadConfig({ DATA_DIR: 'memory://', DEMO_LISTINGS: '0', INBOUND_SMTP_PORT: '0' }),
    host: '127.0.0.1',
    modelPort: 0,
    directoryPort: 0,
    logLevel: 'silent',
    dataDir: 'memory://',
    bootstrapAdminKey: ADMIN,
  };
  running = await startServices(config);
  model = running.urls.model as string;
  directory = running.urls.directory as string;
});

afterAll(async () => {
  await running.close();
});

async function expectEnvelope(res: Response, status: number, type: string, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  const body = (await res.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ type, code, request_id: requestId });
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

describe.each([
  ['model', () => model],
  ['directory', () => directory],
])('%s API operational routes', (name, base) => {
  it('answers /healthz and /readyz', async () => {
    const health = await fetch(`${base()}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{16}$/);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base()}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('serves its bundled spec and its reference docs', async () => {
    const spec = (await (await fetch(`${base()}/openapi.json`)).json()) as {
      openapi: string;
      info: { title: string };
    };
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info.title.toLowerCase()).toContain(name);
    const docs = await fetch(`${base()}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('shows no metrics on the API port without METRICS_KEY', async () => {
    const res = await fetch(`${base()}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('http_requests_total');
  });

  it('keeps a plain caller-supplied x-request-id and replaces an unsafe one', async () => {
    const kept = await fetch(`${base()}/healthz`, { headers: { 'x-request-id': 'trace-42.a' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-42.a');
    const replaced = await fetch(`${base()}/healthz`, { headers: { 'x-request-id': 'bad id <script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('errors of the model API skeleton', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${model}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...AUTH, ...headers },
      body,
    });

  it('400 names the field at fault', async () => {
    const error = await expectEnvelope(
      await post(JSON.stringify({ model: 'queen' })),
      400,
      'invalid_request_error',
      'validation_failed',
    );
    expect(error.message).toContain('messages');
  });

  it('400 on a JSON body of the wrong type instead of coercing it (schemathesis ST201)', async () => {
    const res = await fetch(`${model}/v1/projects`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name: false }),
    });
    const error = await expectEnvelope(res, 400, 'invalid_request_error', 'validation_failed');
    expect(error.param).toBe('name');
  });

  it('400 invalid_string on U+0000 in a body string or key, never a 500 from storage (schemathesis ST101)', async () => {
    const res = await fetch(`${model}/v1/projects`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ok', metadata: { 'a\u0000b': 'x' } }),
    });
    const error = await expectEnvelope(res, 400, 'invalid_request_error', 'invalid_string');
    expect(error.param).toBe('metadata.a\u0000b');
  });

  it('coerces multipart fields, which are always strings, to their schema types', async () => {
    const form = (temperature: string) => {
      const body = new FormData();
      body.set('file', new Blob([new Uint8Array(2048)], { type: 'audio/wav' }), 'hello.wav');
      body.set('model', 'voice');
      body.set('temperature', temperature);
      return body;
    };
    const url = `${model}/v1/audio/transcriptions`;
    // 2 KB of zeros pass validation (the handler then finds they are not audio)
    const valid = await fetch(url, { method: 'POST', headers: AUTH, body: form('0.2') });
    const answer = (await valid.json()) as { error?: { code: string } };
    expect(answer.error?.code).toBe('unsupported_audio_format');
    const invalid = await fetch(url, { method: 'POST', headers: AUTH, body: form('warm') });
    await expectEnvelope(invalid, 400, 'invalid_request_error', 'validation_failed');
  });
});

describe('errors of the directory API skeleton', () => {
  it('400 on a limit out of range', async () => {
    const res = await fetch(`${directory}/v1/search?q=plumber&limit=1000`, { headers: AUTH });
    const error = await expectEnvelope(res, 400, 'invalid_request_error', 'validation_failed');
    expect(error.param).toBe('limit');
  });

  it('501 not_implemented for a valid call to an operation not built yet', async () => {
    // every operation of both specs is built now: the directory's spec with no routers at all
    const app = createServiceApp({
      name: 'directory',
      spec: readSpec('directory'),
      docsPath: 'docs/reference/directory.html',
      logger: createLogger('silent', 'directory'),
      routers: [],
      securityHandler: async () => true,
      isReady: () => true,
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/v1/campaigns`, { headers: AUTH });
      await expectEnvelope(res, 501, 'api_error', 'not_implemented');
    } finally {
      server.close();
    }
  });
});

describe('route lookup', () => {
  it("compiles each route's matcher once, not on every request (the validator's lookup)", async () => {
    const call = () => fetch(`${model}/v1/models`, { headers: AUTH });
    const search = () => fetch(`${directory}/v1/search?q=plumber&limit=1`, { headers: AUTH });
    expect((await call()).status).toBe(200);
    expect((await search()).status).toBeLessThan(500);
    const after = routeMatchers.compiled;
    expect(after).toBeGreaterThan(0); // the first requests compiled them, through the memo
    for (let i = 0; i < 20; i++) {
      expect((await call()).status).toBe(200);
      expect((await search()).status).toBeLessThan(500);
    }
    // the same operations again, resolved from the kept matchers, and still validated
    expect(routeMatchers.compiled).toBe(after);
    expect((await fetch(`${model}/v1/models/nope`, { headers: AUTH })).status).toBe(404);
  });
});
