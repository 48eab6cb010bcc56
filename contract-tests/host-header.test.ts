// URLs the services hand out (generated images, listing photos) are never built from the
// request's Host header, which whoever sends the request chooses: a configured public URL, else
// the address the service listens on (issue 29, finding 7).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServers, type TestServers } from './support/server.ts';

/** A call with a Host header of our choosing (fetch does not let one set it). */
function callWithHost(base: string, path: string, host: string, key: string, body?: unknown) {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<{ status: number; text: string; headers: Record<string, unknown> }>(
    (resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: payload === undefined ? 'GET' : 'POST',
          headers: {
            host,
            authorization: `Bearer ${key}`,
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString(),
              headers: res.headers,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    },
  );
}

describe('URLs handed out ignore the Host header', () => {
  let servers: TestServers;
  beforeAll(async () => {
    servers = await startTestServers('pglite');
    // every listing's photos are shown: claimed ones carry them
    await servers.platform.db.query('update listings set claimed = true');
  });
  afterAll(async () => servers?.stop());

  it('image URLs start with the listening address, not the Host sent', async () => {
    const res = await callWithHost(
      servers.urls.model!,
      '/v1/images/generations',
      'evil.example',
      servers.adminKey,
      {
        model: 'imagine',
        prompt: 'a lighthouse',
        size: '1024x1024',
        response_format: 'url',
      },
    );
    expect(res.status).toBe(200);
    const url = (JSON.parse(res.text) as { data: Array<{ url: string }> }).data[0]!.url;
    expect(url.startsWith(`${servers.urls.model}/v1/images/files/`)).toBe(true);
    expect(res.text).not.toContain('evil.example');
  });

  it('photo URLs of listings start with the listening address, not the Host sent', async () => {
    const res = await callWithHost(
      servers.urls.directory!,
      '/v1/search?q=restaurant&limit=50',
      'evil.example',
      servers.adminKey,
    );
    expect(res.status).toBe(200);
    expect(res.text).toContain(`${servers.urls.directory}/v1/places/photos/`);
    expect(res.text).not.toContain('evil.example');
  });

  it("the console page's Content-Security-Policy names configured origins, not the Host sent", async () => {
    const res = await callWithHost(
      servers.urls.model!,
      '/console/keys',
      'evil.example:8080',
      servers.adminKey,
    );
    expect(res.status).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    const port = new URL(servers.urls.directory!).port;
    expect(csp).toContain(
      `connect-src 'self' http://localhost:${port} http://127.0.0.1:${port} http://[::1]:${port};`,
    );
    expect(csp).not.toContain('evil.example');
    expect(res.text).not.toContain('evil.example');
  });
});
