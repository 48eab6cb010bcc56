// No single request stalls the service. Worst cases of the text every operation takes (a run of
// one character, a string without spaces, many short words, deep nesting, many tiny parts, the
// largest body allowed) are sent one at a time to an instance started as an operator starts it
// (`node src/main.ts`, both services in one process), while a second client polls `/healthz` of
// both services: every call answers (< 500) in bounded time, and no health check waits 500 ms.
// A chat message of one character repeated 3,000,000 times held both services for minutes.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, startInstance, waitReady } from './support/instances.ts';

const KEY = `sk_test_admin_${randomBytes(16).toString('hex')}`;
/** What express.json takes (10 MB), less room for the envelope around the text. */
const LARGEST = 10 * 1024 * 1024 - 4096;
/** The most a health check may wait while the worst case runs beside it. */
const HEALTH_BUDGET_MS = 500;
/** The most one worst case may take to be answered. */
const CALL_BUDGET_MS = 60_000;

/** Texts of `n` characters that cost a naive tokenizer or reader the most. */
function worstTexts(n: number): Record<string, string> {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const random = Array.from(randomBytes(n), (b) => letters[b % 26]).join('');
  const cjk = Array.from(randomBytes(Math.floor(n / 3)), (b) => String.fromCodePoint(0x4e00 + b * 7)).join(
    '',
  );
  return {
    'one character repeated': 'a'.repeat(n),
    'one CJK character repeated': '中'.repeat(Math.floor(n / 3)),
    'letters without a space': random,
    'CJK without a space': cjk,
    'spaces, then a letter': `${' '.repeat(n - 1)}x`,
    'punctuation repeated': '!?'.repeat(Math.floor(n / 2)),
    'many short words': 'a '.repeat(Math.floor(n / 2)),
    'digits without a space': '7'.repeat(n),
    'an upper-case run then lower case': `${'A'.repeat(n - 1)}a`,
  };
}

interface Case {
  name: string;
  api: 'model' | 'directory';
  method: 'GET' | 'POST';
  path: string;
  body?: Uint8Array<ArrayBuffer>;
}

const json = (value: unknown) => new Uint8Array(Buffer.from(JSON.stringify(value)));

/** Every operation that takes people's text, with its worst cases at the size it allows. */
function cases(): Case[] {
  const out: Case[] = [];
  const big = worstTexts(LARGEST / 4); // 2.6 M characters (the CJK ones: 3 bytes a character)
  for (const [what, text] of Object.entries(big)) {
    for (const model of ['king', 'prince']) {
      out.push({
        name: `chat (${model}): ${what}`,
        api: 'model',
        method: 'POST',
        path: '/v1/chat/completions',
        body: json({ model, max_tokens: 16, messages: [{ role: 'user', content: text }] }),
      });
    }
    out.push({
      name: `embeddings: ${what}`,
      api: 'model',
      method: 'POST',
      path: '/v1/embeddings',
      body: json({ model: 'king', input: text }),
    });
  }
  const megabyte = worstTexts(1_000_000); // what a response's input text may hold
  for (const [what, text] of Object.entries(megabyte)) {
    out.push({
      name: `responses: ${what}`,
      api: 'model',
      method: 'POST',
      path: '/v1/responses',
      body: json({ model: 'king', max_output_tokens: 16, input: text }),
    });
  }
  out.push(
    {
      name: 'chat: the largest body, one character repeated',
      api: 'model',
      method: 'POST',
      path: '/v1/chat/completions',
      body: json({
        model: 'king',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'a'.repeat(LARGEST) }],
      }),
    },
    {
      name: 'chat: many tiny parts',
      api: 'model',
      method: 'POST',
      path: '/v1/chat/completions',
      body: json({
        model: 'king',
        max_tokens: 16,
        messages: [
          { role: 'user', content: Array.from({ length: 200_000 }, () => ({ type: 'text', text: 'a' })) },
        ],
      }),
    },
    {
      name: 'chat: a schema nested 100 levels',
      api: 'model',
      method: 'POST',
      path: '/v1/chat/completions',
      body: json({
        model: 'king',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'deep', schema: nested(100) } },
      }),
    },
    {
      name: 'embeddings: 2,048 inputs of 4,000 characters',
      api: 'model',
      method: 'POST',
      path: '/v1/embeddings',
      body: json({
        model: 'king',
        input: Array.from({ length: 2048 }, (_, i) => `${'ab'.repeat(2000)}${i}`),
      }),
    },
  );
  for (const [what, text] of Object.entries(worstTexts(4000))) {
    out.push({
      name: `images: ${what}`,
      api: 'model',
      method: 'POST',
      path: '/v1/images/generations',
      body: json({ model: 'imagine', prompt: text, size: '256x256', response_format: 'b64_json' }),
    });
  }
  for (const [what, text] of Object.entries(worstTexts(4096))) {
    out.push({
      name: `speech: ${what}`,
      api: 'model',
      method: 'POST',
      path: '/v1/audio/speech',
      body: json({ model: 'voice', voice: 'alloy', input: text, response_format: 'pcm' }),
    });
  }
  for (const [what, text] of Object.entries(worstTexts(256))) {
    for (const path of ['/v1/search?mode=keyword&q=', '/v1/search?mode=hybrid&q=', '/v1/places/geocode?q=']) {
      out.push({
        name: `${path.split('?')[0]} ${path.includes('mode=') ? path.split('mode=')[1]!.split('&')[0] : ''}: ${what}`,
        api: 'directory',
        method: 'GET',
        path: `${path}${encodeURIComponent(text)}`,
      });
    }
  }
  out.push({
    name: "concierge brief: a body over the Directory API's 1 MB",
    api: 'directory',
    method: 'POST',
    path: '/v1/concierge/briefs',
    body: json({ brief: 'a'.repeat(2 * 1024 * 1024), contact: false }),
  });
  for (const [what, text] of Object.entries(worstTexts(8000))) {
    out.push({
      name: `concierge brief: ${what}`,
      api: 'directory',
      method: 'POST',
      path: '/v1/concierge/briefs',
      body: json({ brief: text, contact: false }),
    });
  }
  return out;
}

function nested(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

describe('no single request stalls the service', () => {
  let instance: Instance;
  const all = cases();

  beforeAll(async () => {
    instance = await startInstance({ BOOTSTRAP_ADMIN_KEY: KEY, LOG_LEVEL: 'error' });
    await waitReady(instance.directory, 180_000);
    const subscribed = await fetch(`${instance.model}/v1/subscriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'concierge' }),
    });
    expect(subscribed.status, await subscribed.text()).toBeLessThan(300);
  }, 240_000);

  afterAll(async () => {
    await instance?.stop();
  });

  it(`answers each of ${all.length} worst cases in bounded time while /healthz answers within ${HEALTH_BUDGET_MS} ms`, async () => {
    let current = '(none)';
    let polling = true;
    const slowChecks: string[] = [];
    let checks = 0;
    const poll = (async () => {
      while (polling) {
        for (const base of [instance.model, instance.directory]) {
          const began = performance.now();
          const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(30_000) }).catch(
            (err: unknown) => err as Error,
          );
          const took = performance.now() - began;
          checks++;
          if (res instanceof Error || res.status !== 200 || took > HEALTH_BUDGET_MS)
            slowChecks.push(
              `${base}/healthz: ${res instanceof Error ? res.message : res.status} in ${Math.round(took)} ms, during "${current}"`,
            );
          if (!(res instanceof Error)) await res.arrayBuffer();
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    const failures: string[] = [];
    const timings: string[] = [];
    const workflows: { name: string; id: string }[] = [];
    for (const c of all) {
      current = c.name;
      const began = performance.now();
      const res = await fetch(`${instance[c.api]}${c.path}`, {
        method: c.method,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(c.body ? { 'content-type': 'application/json' } : {}),
        },
        ...(c.body ? { body: c.body } : {}),
        signal: AbortSignal.timeout(CALL_BUDGET_MS),
      }).catch((err: unknown) => err as Error);
      const took = Math.round(performance.now() - began);
      if (res instanceof Error) {
        failures.push(`${c.name}: no answer within ${CALL_BUDGET_MS} ms (${res.message})`);
        continue;
      }
      const text = await res.text();
      timings.push(`${took} ms ${res.status} ${c.name}`);
      if (res.status >= 500) failures.push(`${c.name}: ${res.status} ${text.slice(0, 300)}`);
      if (res.status === 202) workflows.push({ name: c.name, id: (JSON.parse(text) as { id: string }).id });
    }
    // the briefs are read in the background (the workflows' jobs): health checks go on until each ends
    for (const w of workflows) {
      current = `the workflow of ${w.name}`;
      const deadline = Date.now() + CALL_BUDGET_MS;
      let status = 'queued';
      while (Date.now() < deadline) {
        const res = await fetch(`${instance.directory}/v1/concierge/workflows/${w.id}`, {
          headers: { authorization: `Bearer ${KEY}` },
        });
        status = ((await res.json()) as { status: string }).status;
        if (status !== 'queued' && status !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      if (status === 'queued' || status === 'running')
        failures.push(`${current}: still ${status} after ${CALL_BUDGET_MS} ms`);
    }
    current = '(done)';
    polling = false;
    await poll;
    console.log(
      `worst cases, slowest first:\n  ${timings
        .sort((a, b) => parseInt(b) - parseInt(a))
        .slice(0, 15)
        .join('\n  ')}`,
    );
    expect({ failures, slowChecks }).toEqual({ failures: [], slowChecks: [] });
    expect(checks).toBeGreaterThan(all.length);
  }, 1_200_000);
});
