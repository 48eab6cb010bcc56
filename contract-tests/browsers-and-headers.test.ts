// Regression: no response carried `X-Content-Type-Options: nosniff`, key responses carried no
// `Cache-Control: no-store`, and there was no CORS, so a browser app could not call the API with
// a bearer key. Proven with real preflights and with a real browser on another origin.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServers, type TestServers } from './support/server.ts';

describe('security headers and CORS (any origin, the default)', () => {
  let servers: TestServers;
  let model: string;
  let browser: Browser | undefined;
  let page: Server;
  let pageUrl: string;

  beforeAll(async () => {
    servers = await startTestServers('pglite');
    model = servers.urls.model ?? '';
    // A page of a browser app on another origin (another port is another origin).
    page = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>app</title><p>app</p>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await browser?.close();
    page?.close();
    await servers?.stop();
  });

  it('sends nosniff, no-referrer and DENY on every response, operational ones included', async () => {
    for (const path of ['/v1/models', '/v1/keys', '/healthz', '/openapi.json', '/docs', '/v1/nowhere']) {
      for (const key of [servers.adminKey, 'sk_wrong']) {
        const res = await fetch(`${model}${path}`, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
        expect(res.headers.get('x-frame-options'), path).toBe('DENY');
        expect(res.headers.get('x-powered-by'), path).toBeNull();
      }
    }
  });

  it('sends Cache-Control: no-store on key responses (the secret among them) and on auth errors', async () => {
    const created = await fetch(`${model}/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${servers.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cache test', scopes: ['chat'] }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { id } = (await created.json()) as { id: string };
    for (const [method, path] of [
      ['GET', '/v1/keys'],
      ['GET', `/v1/keys/${id}`],
      ['POST', `/v1/keys/${id}/rotate`],
    ] as const) {
      const res = await fetch(`${model}${path}`, {
        method,
        headers: { authorization: `Bearer ${servers.adminKey}` },
      });
      await res.arrayBuffer();
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
    const denied = await fetch(`${model}/v1/keys`, { headers: { authorization: 'Bearer sk_wrong' } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('cache-control')).toBe('no-store');
  });

  it('answers a preflight with the methods and the very headers asked for, and no credentials', async () => {
    const res = await fetch(`${model}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.eu',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,idempotency-key,x-stainless-os',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'authorization,content-type,idempotency-key,x-stainless-os',
    );
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('access-control-max-age')).toBe('600');
  });

  it('exposes the request id, limits and retry advice to a page', async () => {
    const res = await fetch(`${model}/v1/models`, {
      headers: { authorization: `Bearer ${servers.adminKey}`, origin: 'https://app.example.eu' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(',');
    for (const name of ['x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'retry-after-ms']) {
      expect(exposed).toContain(name);
    }
  });

  it('lets a page on another origin call chat with a bearer key, in a real browser', async () => {
    browser = await launchChromium();
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    const answer = await tab.evaluate(
      async ({ base, key }) => {
        const res = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'prince', messages: [{ role: 'user', content: 'Hello' }] }),
        });
        return {
          status: res.status,
          requestId: res.headers.get('x-request-id'),
          object: ((await res.json()) as { object?: string }).object,
        };
      },
      { base: model, key: servers.adminKey },
    );
    expect(answer.status).toBe(200);
    expect(answer.object).toBe('chat.completion');
    expect(answer.requestId).toMatch(/^req_/);
  });
});

describe('CORS with CORS_ORIGINS set', () => {
  let servers: TestServers;
  beforeAll(async () => {
    servers = await startTestServers('pglite', {
      which: ['model'],
      env: { CORS_ORIGINS: 'https://app.example.eu,http://localhost:5173' },
    });
  });
  afterAll(async () => {
    await servers?.stop();
  });

  it('allows the listed origins and no other', async () => {
    const ask = (origin: string) =>
      fetch(`${servers.urls.model}/v1/models`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET' },
      });
    const listed = await ask('http://localhost:5173');
    expect(listed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(listed.headers.get('vary')).toMatch(/origin/i);
    const other = await ask('https://evil.example.com');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
