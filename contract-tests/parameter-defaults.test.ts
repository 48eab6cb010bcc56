// A spec default is a value the server accepts when a client sends it (DESIGN, fourth round):
// generators (openapi-python-client, oapi-codegen...) send every default. `radius_km` had
// `default: 10`, and every search from a generated Python client was a 400 `radius_without_near`.
// Each GET operation of both specs is called as a generated client calls it: its required
// parameters (the spec's examples), `q` where it takes one, and its defaulted parameters at their
// defaults, one at a time and all at once: never a 400 that names one of them, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, operations, paramExample, type Parameter } from './support/spec.ts';
import { startTestServers, type TestServers } from './support/server.ts';

describe('every parameter default is accepted when a client sends it', () => {
  let servers: TestServers;
  beforeAll(async () => {
    servers = await startTestServers('pglite');
  });
  afterAll(async () => servers?.stop());

  for (const api of ['model', 'directory'] as Api[]) {
    it(`${api}: defaulted parameters sent at their defaults are never refused for it`, async () => {
      const refused: string[] = [];
      let sent = 0;
      for (const op of operations(api).filter((o) => o.method === 'GET')) {
        let path = op.path;
        for (const p of op.parameters.filter((p) => p.in === 'path'))
          path = path.replace(`{${p.name}}`, encodeURIComponent(String(paramExample(api, p) ?? 'x')));
        const base = new URLSearchParams();
        for (const r of op.parameters.filter((p) => p.required && p.in === 'query'))
          base.set(r.name, String(paramExample(api, r)));
        const q = op.parameters.find((p) => p.in === 'query' && p.name === 'q');
        if (q && !base.has('q')) base.set('q', String(paramExample(api, q)));
        const defaulted = op.parameters.filter((p) => p.in === 'query' && p.schema?.default !== undefined);
        const tries: Parameter[][] = [
          ...defaulted.map((p) => [p]),
          ...(defaulted.length > 1 ? [defaulted] : []),
        ];
        for (const params of tries) {
          const query = new URLSearchParams(base);
          for (const p of params) query.set(p.name, String(p.schema!.default));
          const res = await fetch(`${servers.urls[api]}${path}?${query.toString()}`, {
            headers: { authorization: `Bearer ${servers.adminKey}` },
          });
          sent++;
          const body = (await res.json().catch(() => null)) as {
            error?: { param?: string; code?: string };
          } | null;
          const named = params.some((p) => p.name === body?.error?.param);
          if ((res.status === 400 && named) || res.status >= 500)
            refused.push(`${op.operationId}?${query.toString()}: ${res.status} ${body?.error?.code}`);
        }
      }
      expect(sent).toBeGreaterThan(0);
      expect(refused).toEqual([]);
    });
  }
});
