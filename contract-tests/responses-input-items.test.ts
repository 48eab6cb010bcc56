// Every input item type and content part of OpenAI's Responses API description (the list in
// contract-tests/openai/response-input-items.json, derived from openai/openai-openapi at the
// commit it names) sent through the official OpenAI SDK for JavaScript, on both storages: each
// is accepted and answered, or refused with a 400 that names its place and its type. Also the
// item_reference rules: any stored item of the account, a 404 for an unknown id or another
// account's item.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServers, storages, type TestServers } from './support/server.ts';

interface Entry {
  schema: string;
  type: string;
  example: Record<string, unknown>;
}
const LIST = JSON.parse(readFileSync('contract-tests/openai/response-input-items.json', 'utf8')) as {
  items: Entry[];
  message_content_parts: Entry[];
  function_output_parts: Entry[];
};

const ACCEPTED_ITEMS = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
  'mcp_call',
  'mcp_list_tools',
]);
const ACCEPTED_PARTS = new Set(['input_text', 'output_text', 'refusal']);
const ACCEPTED_OUTPUT_PARTS = new Set(['input_text']);

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};
const CALL = {
  type: 'function_call',
  call_id: 'call_fn1',
  name: 'get_weather',
  arguments: '{"city":"Lisbon"}',
};
const ASK = { role: 'user', content: 'What is the weather in Lisbon?' };

type Input = OpenAI.Responses.ResponseCreateParams['input'];

describe.each(await storages())('Responses input items of OpenAI’s description on %s', (storage) => {
  let servers: TestServers;
  let openai: OpenAI;
  let stranger: OpenAI;

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    const base = `${servers.urls.model}/v1`;
    openai = new OpenAI({ baseURL: base, apiKey: servers.adminKey, maxRetries: 0 });
    const other = await servers.platform.accounts.createAccount('stranger');
    const key = await servers.platform.accounts.createKey(other.accountId, {
      name: 'stranger',
      scopes: ['chat'],
    });
    stranger = new OpenAI({ baseURL: base, apiKey: key.secret, maxRetries: 0 });
  });
  afterAll(async () => servers?.stop());

  const send = (input: unknown[], client = openai, tools = true) =>
    client.responses.create({
      model: 'queen',
      input: input as Input,
      ...(tools ? { tools: [WEATHER] } : {}),
      seed: 3,
    } as never);

  async function refusal(
    input: unknown[],
  ): Promise<{ status: number; code: string; param: string; message: string }> {
    const err = (await send(input).then(
      () => undefined,
      (e: unknown) => e,
    )) as InstanceType<typeof OpenAI.APIError> | undefined;
    expect(err, 'refused').toBeInstanceOf(OpenAI.APIError);
    return {
      status: err?.status ?? 0,
      code: String(err?.code),
      param: String(err?.param),
      message: err?.message ?? '',
    };
  }

  it('walks every item type: accepted and answered, or a 400 naming input[i] and the type', async () => {
    expect(LIST.items.length).toBeGreaterThanOrEqual(33);
    const stored = await send([{ role: 'user', content: 'Say hello.' }], openai, false);
    const storedMessage = stored.output.find((item) => item.type === 'message');
    for (const entry of LIST.items) {
      let input: unknown[];
      if (entry.type === 'function_call')
        input = [ASK, entry.example, { type: 'function_call_output', call_id: 'call_fn1', output: '19 C' }];
      else if (entry.type === 'function_call_output') input = [ASK, CALL, entry.example];
      else if (entry.type === 'item_reference') input = [ASK, { ...entry.example, id: storedMessage?.id }];
      else input = [ASK, entry.example];
      if (ACCEPTED_ITEMS.has(entry.type)) {
        const response = await send(input);
        expect(response.status, `${entry.schema} (${entry.type})`).toBe('completed');
        const kept = await openai.responses.inputItems.list(response.id, { order: 'asc' });
        expect(kept.data.length, entry.schema).toBe(input.length);
      } else {
        const err = await refusal(input);
        expect(err, entry.schema).toMatchObject({
          status: 400,
          code: 'validation_failed',
          param: 'input[1]',
        });
        expect(err.message, entry.schema).toContain(
          `input[1]: item type \`${entry.type}\` is not supported by this server`,
        );
      }
    }
  });

  it('walks every message content part and function output part', async () => {
    for (const entry of LIST.message_content_parts) {
      const role = entry.type === 'input_text' ? 'user' : 'assistant';
      const input = [ASK, { type: 'message', role, content: [entry.example] }];
      if (ACCEPTED_PARTS.has(entry.type)) {
        expect((await send(input)).status, entry.schema).toBe('completed');
      } else {
        const err = await refusal([
          { role: 'user', content: [{ type: 'input_text', text: 'Look:' }, entry.example] },
        ]);
        expect(err, entry.schema).toMatchObject({ status: 400, param: 'input[0].content[1]' });
        expect(err.message).toContain(`content part type \`${entry.type}\` is not supported by this server`);
      }
    }
    for (const entry of LIST.function_output_parts) {
      const input = [
        ASK,
        CALL,
        { type: 'function_call_output', call_id: 'call_fn1', output: [entry.example] },
      ];
      if (ACCEPTED_OUTPUT_PARTS.has(entry.type)) {
        const response = await send(input);
        expect(response.output_text, entry.schema).toMatch(/temperature c 19/);
        const kept = await openai.responses.inputItems.list(response.id, { order: 'asc' });
        expect(kept.data[2]).toMatchObject({ type: 'function_call_output', output: [entry.example] });
      } else {
        const err = await refusal(input);
        expect(err, entry.schema).toMatchObject({ status: 400, param: 'input[2].output[0]' });
        expect(err.message).toContain(`content part type \`${entry.type}\` is not supported by this server`);
      }
    }
  });

  it('reads a function result sent as text parts as the model’s tool message', async () => {
    const parts = await send([
      ASK,
      CALL,
      {
        type: 'function_call_output',
        call_id: 'call_fn1',
        output: [
          { type: 'input_text', text: 'sunny, ' },
          { type: 'input_text', text: '19 C' },
        ],
      },
    ]);
    const text = await send([
      ASK,
      CALL,
      { type: 'function_call_output', call_id: 'call_fn1', output: 'sunny, 19 C' },
    ]);
    expect(parts.output_text).toBe(text.output_text);
  });

  it('resolves item_reference to any stored item of the account, and 404s an unknown or foreign one', async () => {
    const first = await send([ASK]);
    const call = first.output.find((item) => item.type === 'function_call');
    const message = (await send([{ role: 'user', content: 'Say hello.' }], openai, false)).output.find(
      (item) => item.type === 'message',
    );
    const firstInput = (await openai.responses.inputItems.list(first.id)).data[0];
    const ids = [call?.id, message?.id, firstInput?.id].filter((id): id is string => id !== undefined);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    // the Vercel AI SDK's shape: earlier turns by reference, without `type` too
    const next = await send([
      ...ids.map((id, i) => (i === 0 ? { id } : { type: 'item_reference', id })),
      { role: 'user', content: 'And tomorrow?' },
    ]);
    expect(next.status).toBe('completed');
    const kept = await openai.responses.inputItems.list(next.id, { order: 'asc' });
    expect(kept.data.map((item) => item.id).slice(0, ids.length)).toEqual(ids);

    const unknown = await refusal([{ type: 'item_reference', id: 'msg_01JXNEVERST0REDANYWHERE000' }]);
    expect(unknown).toMatchObject({ status: 404, code: 'item_not_found', param: 'input[0].id' });
    const foreign = await send([{ type: 'item_reference', id: message?.id }], stranger).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(foreign).toMatchObject({ status: 404, code: 'item_not_found' });
  });
});
