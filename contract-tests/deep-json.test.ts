// Regression: a chat body of JSON nested 10,000 levels deep answered 500 `internal_error`. Every
// body the parser or the validator cannot handle is a 400 in the envelope; this probe sends the
// same bodies to every operation of both services that takes one, JSON and multipart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../src/platform/json-depth.ts';
import { pendingOperations } from './support/requests.ts';
import { type Api, operations } from './support/spec.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const DEEP = deep(10_000);

/** Bodies no operation can take: each must be a 4xx in the envelope, never a 5xx. */
const BAD_JSON: Record<string, string> = {
  'nested 10,000 levels': DEEP,
  'nested 10,000 levels inside an object': `{"model":"queen","messages":[{"role":"user","content":${DEEP}}]}`,
  'nested one level too deep': `{"input":${deep(MAX_JSON_DEPTH)}}`,
  null: 'null',
  'a bare string': '"hello"',
  'a number too large for a double': '{"n":1e400}',
  truncated: '{"model":"queen","messages":[',
  'invalid UTF-8': '{"model":"\xff\xfe"}',
  'a __proto__ key': '{"__proto__":{"polluted":true}}',
  empty: '',
};

for (const storage of await storages()) {
  describe(`bodies the parser or validator cannot handle (${storage})`, () => {
    let servers: TestServers;
    beforeAll(async () => {
      servers = await startTestServers(storage);
    });
    afterAll(async () => {
      await servers?.stop();
    });

    for (const api of ['model', 'directory'] as Api[]) {
      it(`refuses JSON nested 10,000 levels deep with 400 json_too_deep on every ${api} operation`, async () => {
        const jsonOps = operations(api).filter((op) => op.requestBody?.content['application/json']);
        expect(jsonOps.length).toBeGreaterThan(0);
        for (const op of jsonOps) {
          const path = op.path.replace(/\{[^}]+\}/g, 'x_unknown');
          const res = await fetch(`${servers.urls[api]}${path}`, {
            method: op.method,
            headers: { authorization: `Bearer ${servers.adminKey}`, 'content-type': 'application/json' },
            body: DEEP,
          });
          const body = (await res.json()) as { error?: { code?: string } };
          expect(res.status, `${op.operationId}`).toBe(400);
          expect(body.error?.code, `${op.operationId}`).toBe('json_too_deep');
        }
      });

      it(`answers every unhandleable JSON body on every ${api} operation with a 4xx in the envelope`, async () => {
        for (const op of operations(api).filter((o) => o.requestBody?.content['application/json'])) {
          const path = op.path.replace(/\{[^}]+\}/g, 'x_unknown');
          for (const [what, text] of Object.entries(BAD_JSON)) {
            const send = (bytes: string) =>
              fetch(`${servers.urls[api]}${path}`, {
                method: op.method,
                headers: { authorization: `Bearer ${servers.adminKey}`, 'content-type': 'application/json' },
                body: Buffer.from(bytes, 'latin1'),
              });
            const res = await send(text);
            // an empty body is read as `{}`: where every field is optional (createConversation) it is valid
            if (what === 'empty' && res.status < 300) {
              await res.arrayBuffer();
              const object = await send('{}');
              await object.arrayBuffer();
              expect(object.status, `${op.operationId}: {}`).toBe(res.status);
              continue;
            }
            const body = (await res.json()) as { error?: { type?: string } };
            expect(res.status, `${op.operationId}: ${what}`).toBeGreaterThanOrEqual(400);
            expect(res.status, `${op.operationId}: ${what}`).toBeLessThan(500);
            expect(body.error?.type, `${op.operationId}: ${what}`).toBe('invalid_request_error');
          }
        }
      });

      it(`never answers a ${api} multipart operation with a 5xx for deep JSON in its fields`, async () => {
        const pending = new Set(pendingOperations(api));
        for (const op of operations(api).filter((o) => o.requestBody?.content['multipart/form-data'])) {
          const form = new FormData();
          form.set('file', new Blob([DEEP], { type: 'application/json' }), 'deep.json');
          for (const field of ['model', 'prompt', 'language', 'response_format', 'metadata'])
            form.set(field, DEEP);
          const res = await fetch(`${servers.urls[api]}${op.path}`, {
            method: op.method,
            headers: { authorization: `Bearer ${servers.adminKey}` },
            body: form,
          });
          await res.arrayBuffer();
          if (pending.has(op.operationId) && res.status === 501) continue;
          expect(res.status, op.operationId).toBeLessThan(500);
        }
      });
    }
  });
}
