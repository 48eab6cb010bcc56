// The Prism mocks, proven: every operation of both generated SDKs is called against the mock
// of its service, answers its documented success status, and the body matches its schema.
// Chat with streaming is called through the generated streaming SDK and every event checked.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock } from '../scripts/mock.ts';
import { freePort, stop, waitForHttp } from './support/processes.ts';
import {
  type Api,
  componentValidator,
  exampleOf,
  explain,
  type Operation,
  operations,
  paramExample,
  responseValidator,
} from './support/spec.ts';

type SdkFunction = (options: Record<string, unknown>) => Promise<{
  data?: unknown;
  error?: unknown;
  response: Response;
}>;

const mocks: Partial<Record<Api, { url: string; child: ChildProcess }>> = {};

beforeAll(async () => {
  for (const api of ['model', 'directory'] as const) {
    const port = await freePort();
    const child = startMock(api, port, { quiet: true });
    const url = `http://127.0.0.1:${port}`;
    mocks[api] = { url, child };
  }
  await Promise.all(Object.values(mocks).map(({ url, child }) => waitForHttp(url, child)));
});

afterAll(async () => {
  await Promise.all(Object.values(mocks).map(({ child }) => stop(child)));
});

async function sdkOf(api: Api) {
  const sdk = (await import(`../generated/${api}/client/sdk.gen.ts`)) as Record<string, SdkFunction>;
  const { createClient } = await import(`../generated/${api}/client/client/index.ts`);
  const client = createClient({ baseUrl: mocks[api]?.url, auth: 'sk_mock_0123456789abcdefghijklmnopqrstuv' });
  return { sdk, client };
}

function successStatus(op: Operation): string {
  const status = Object.keys(op.responses).find((s) => /^2\d\d$/.test(s));
  if (!status) throw new Error(`${op.operationId} documents no 2xx`);
  return status;
}

function bodyFor(op: Operation): unknown {
  const content = op.requestBody?.content ?? {};
  if (content['application/json']) return exampleOf(content['application/json']);
  const multipart = content['multipart/form-data'];
  if (multipart) {
    const example = (exampleOf(multipart) ?? {}) as Record<string, unknown>;
    const form: Record<string, unknown> = { ...example };
    form.file = new Blob([new Uint8Array(2048)], { type: 'audio/wav' });
    return form;
  }
  return undefined;
}

function callOptions(op: Operation): Record<string, unknown> {
  const path: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  for (const param of op.parameters) {
    if (param.in === 'path') path[param.name] = paramExample(op.api, param);
    if (param.in === 'query' && param.required) query[param.name] = paramExample(op.api, param);
  }
  const options: Record<string, unknown> = {};
  if (Object.keys(path).length) options.path = path;
  if (Object.keys(query).length) options.query = query;
  const body = bodyFor(op);
  if (body !== undefined) options.body = body;
  return options;
}

describe.each(['model', 'directory'] as const)('the %s mock', (api) => {
  const ops = operations(api);

  it('has an SDK function for every operation of the spec, and no other', async () => {
    const { sdk } = await sdkOf(api);
    const functions = Object.keys(sdk).filter((name) => typeof sdk[name] === 'function');
    expect(functions.sort()).toEqual(ops.map((op) => op.operationId).sort());
  });

  it.each(ops.map((op) => [`${op.method} ${op.path} (${op.operationId})`, op] as const))(
    '%s answers its documented success through the SDK',
    async (_name, op) => {
      const { sdk, client } = await sdkOf(api);
      const fn = sdk[op.operationId];
      if (!fn) throw new Error(`the ${api} SDK lacks ${op.operationId}`);
      const status = successStatus(op);
      const result = await fn({ client, ...callOptions(op) });
      expect(result.error, JSON.stringify(result.error)).toBeUndefined();
      expect(String(result.response.status)).toBe(status);
      expect(result.response.headers.get('x-request-id')).toBeTruthy();
      const contentType = result.response.headers.get('content-type') ?? '';
      if (contentType.startsWith('application/json')) {
        const validate = responseValidator(op, status);
        expect(validate(result.data), explain(validate)).toBe(true);
      }
    },
  );
});

describe('the model mock streams chat over SSE', () => {
  it('yields chunks that match the chunk schema, then [DONE], through the streaming SDK', async () => {
    const { createChatCompletion } = await import('../generated/model/stream/sdk.gen.ts');
    const { createClient } = await import('../generated/model/stream/client/index.ts');
    const client = createClient({
      baseUrl: mocks.model?.url ?? '',
      auth: 'sk_mock_0123456789abcdefghijklmnopqrstuv',
    });
    const { stream } = await createChatCompletion({
      client,
      body: { model: 'queen', messages: [{ role: 'user', content: 'Hello' }], stream: true },
      headers: { accept: 'text/event-stream' },
      sseMaxRetryAttempts: 0,
    });
    const validate = componentValidator('model', 'ChatCompletionChunk');
    const events: unknown[] = [];
    for await (const event of stream) events.push(event);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(validate(chunk), explain(validate)).toBe(true);
  });
});
