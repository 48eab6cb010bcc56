// /v1/conversations through the official OpenAI SDK for JavaScript, on both storages: create with
// items and metadata, retrieve, update, list and add items (paged as the SDK pages), get and
// delete an item, responses that continue a conversation, and another project's 404.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentValidator } from './support/spec.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

describe.each(await storages())('/v1/conversations on %s', (storage) => {
  let servers: TestServers;
  let openai: OpenAI;
  let base: string;

  beforeAll(async () => {
    servers = await startTestServers(storage, { which: ['model'] });
    base = `${servers.urls.model}/v1`;
    openai = new OpenAI({ baseURL: base, apiKey: servers.adminKey, maxRetries: 0 });
  });
  afterAll(async () => servers?.stop());

  it('creates, reads, updates and deletes a conversation and its items', async () => {
    const conversation = await openai.conversations.create({
      metadata: { topic: 'whales' },
      items: [{ type: 'message', role: 'user', content: 'When can I see whales in the Azores?' }],
    });
    expect(componentValidator('model', 'Conversation')(conversation)).toBe(true);
    expect(conversation).toMatchObject({ object: 'conversation', metadata: { topic: 'whales' } });
    expect((await openai.conversations.retrieve(conversation.id)).id).toBe(conversation.id);
    expect(
      (await openai.conversations.update(conversation.id, { metadata: { topic: 'dolphins' } })).metadata,
    ).toEqual({
      topic: 'dolphins',
    });

    const added = await openai.conversations.items.create(conversation.id, {
      items: Array.from({ length: 4 }, (_, i) => ({ role: 'user' as const, content: `note ${i}` })),
    });
    expect(added.data).toHaveLength(4);
    // the SDK pages by `after` = last_id; 2 a page
    const asc: string[] = [];
    for await (const item of openai.conversations.items.list(conversation.id, { order: 'asc', limit: 2 })) {
      asc.push(
        item.type === 'message' && item.content[0]?.type === 'input_text' ? item.content[0].text : '?',
      );
    }
    expect(asc).toEqual(['When can I see whales in the Azores?', 'note 0', 'note 1', 'note 2', 'note 3']);
    const newest = await openai.conversations.items.list(conversation.id, { limit: 1 });
    expect(newest.data[0]?.id).toBe(added.data[3]?.id);

    const itemId = added.data[0]?.id ?? '';
    const one = await openai.conversations.items.retrieve(itemId, {
      conversation_id: conversation.id,
    });
    expect(one.id).toBe(itemId);
    const after = await openai.conversations.items.delete(itemId, {
      conversation_id: conversation.id,
    });
    expect(after.id).toBe(conversation.id);
    await expect(
      openai.conversations.items.retrieve(itemId, { conversation_id: conversation.id }),
    ).rejects.toMatchObject({ status: 404 });

    const deleted = await openai.conversations.delete(conversation.id);
    expect(deleted).toMatchObject({ id: conversation.id, object: 'conversation.deleted', deleted: true });
    await expect(openai.conversations.retrieve(conversation.id)).rejects.toMatchObject({ status: 404 });
  });

  it('continues a conversation with responses: each reads the items before it and adds its own', async () => {
    const conversation = await openai.conversations.create({});
    const first = await openai.responses.create({
      model: 'queen',
      conversation: conversation.id,
      input: 'My name is Ana and I plan a trip to the Azores.',
    });
    expect(first.conversation).toEqual({ id: conversation.id });
    const second = await openai.responses.create({
      model: 'queen',
      conversation: { id: conversation.id },
      input: 'Which month is best?',
    });
    expect(second.status).toBe('completed');
    // the second response read the first turn: more input tokens than its own input alone
    const alone = await openai.responses.create({ model: 'queen', input: 'Which month is best?' });
    expect(second.usage?.input_tokens).toBeGreaterThan(alone.usage?.input_tokens ?? 0);
    const items = await openai.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data.map((item) => (item.type === 'message' ? item.role : item.type))).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    // an assistant turn of the conversation, by reference, as the Vercel AI SDK sends it
    const referenced = await openai.responses.create({
      model: 'queen',
      input: [
        { type: 'item_reference', id: items.data[1]?.id ?? '' },
        { role: 'user', content: 'Thanks.' },
      ],
    });
    expect(referenced.status).toBe('completed');

    await expect(
      openai.responses.create({
        model: 'queen',
        conversation: conversation.id,
        previous_response_id: first.id,
        input: 'x',
      }),
    ).rejects.toMatchObject({ status: 400, param: 'conversation' });
    await expect(
      openai.responses.create({
        model: 'queen',
        conversation: 'conv_01JX0000000000000000000000',
        input: 'x',
      }),
    ).rejects.toMatchObject({ status: 404, param: 'conversation' });
  });

  it('keeps a conversation to its project', async () => {
    const mine = await openai.conversations.create({ items: [{ role: 'user', content: 'secret plans' }] });
    const project = await fetch(`${base}/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'elsewhere' }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const key = await fetch(`${base}/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${servers.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'other project', scopes: ['chat'], project_id: project.id }),
    }).then((r) => r.json() as Promise<{ secret: string }>);
    const other = new OpenAI({ baseURL: base, apiKey: key.secret, maxRetries: 0 });
    await expect(other.conversations.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.conversations.items.list(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.conversations.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      other.responses.create({ model: 'queen', conversation: mine.id, input: 'What did they plan?' }),
    ).rejects.toMatchObject({ status: 404 });
  });
});
