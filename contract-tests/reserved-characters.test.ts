// Regression: the spec's own example `GET /v1/search?q=restaurant&near=52.52,13.405`, typed as
// curl users type it (the comma unencoded), answered 400 "must be url encoded". Every query value
// is sent here RAW, over node:http with the literal path: no client encodes anything.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, operations, paramExample } from './support/spec.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

interface RawAnswer {
  status: number;
  body: string;
}

/** Sends `path` exactly as given (node:http does not re-encode a path it is handed). */
export function rawGet(base: string, path: string, key: string): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A query value as a person types it: reserved characters kept, only what HTTP forbids escaped. */
function asTyped(value: unknown): string {
  const text = Array.isArray(value) ? value.join(',') : String(value);
  return text
    .replace(/[\s%&#"<>\\^`{|}]/g, (c) => encodeURIComponent(c))
    .replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}

for (const storage of await storages()) {
  describe(`reserved characters in query values, as typed (${storage})`, () => {
    let servers: TestServers;
    beforeAll(async () => {
      servers = await startTestServers(storage);
    });
    afterAll(async () => {
      await servers?.stop();
    });

    it('answers the spec example near=52.52,13.405 with the comma unencoded', async () => {
      const answer = await rawGet(
        servers.urls.directory ?? '',
        '/v1/search?q=restaurant&near=52.52,13.405',
        servers.adminKey,
      );
      expect(answer.body).not.toMatch(/url encoded/);
      expect(answer.status).toBe(200);
    });

    it('accepts colons, slashes, parentheses and commas in free text (city, q)', async () => {
      const answer = await rawGet(
        servers.urls.directory ?? '',
        '/v1/search?q=b%C3%A4cker:brot/(frisch)!&city=Frankfurt%20(Oder)&near=50.11,8.68&radius_km=50',
        servers.adminKey,
      );
      expect(answer.body).not.toMatch(/url encoded/);
      expect(answer.status).toBe(200);
    });

    for (const api of ['model', 'directory'] as Api[]) {
      it(`never refuses a ${api} query example for being unencoded`, async () => {
        const base = servers.urls[api] ?? '';
        for (const op of operations(api).filter((o) => o.method === 'GET')) {
          const query = op.parameters
            .filter((p) => p.in === 'query')
            .map((p) => [p.name, paramExample(api, p)] as const)
            .filter(([, value]) => value !== undefined)
            .map(([name, value]) => `${name}=${asTyped(value)}`)
            .join('&');
          if (!query) continue;
          const path = op.path.replace(/\{[^}]+\}/g, 'x_unknown');
          const answer = await rawGet(base, `${path}?${query}`, servers.adminKey);
          expect(answer.body, `${op.operationId}: ${path}?${query}`).not.toMatch(/url encoded/);
        }
      });
    }
  });
}
