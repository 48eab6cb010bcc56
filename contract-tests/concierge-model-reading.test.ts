// Providers' answers and customers' briefs read by an upstream model through our own Responses API (`text.format` a
// JSON schema), every figure then checked by code against the answer. The model API's
// MODEL_ENGINES puts `queen` (the agents runtime's model) on an OpenAI-compatible upstream on
// loopback that answers as a model would, and `king` on a second instance of our model API (the
// reference engine), whose answers are not readings: the check must refuse what is not written.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentCall, httpAgent, type StructuredCall } from '../src/concierge/agent.ts';
import {
  BRIEF_INSTRUCTIONS,
  BRIEF_SCHEMA,
  briefInput,
  checkedUnderstanding,
} from '../src/concierge/model-brief.ts';
import { plan } from '../src/concierge/stages/planning.ts';
import type { StageRun } from '../src/concierge/stages/stage.ts';
import type { BriefReading, WorkflowRow } from '../src/concierge/store.ts';
import { checkedReading, READING_INSTRUCTIONS, READING_SCHEMA } from '../src/concierge/model-reading.ts';
import { readQuote } from '../src/concierge/quotes.ts';
import { modelBriefAnswer } from '../src/concierge/testing/judged-briefs.ts';
import { type BriefHints, understand } from '../src/concierge/understand.ts';
import { startTestServers, type TestServers } from './support/server.ts';

const received = new Date('2026-11-26T12:00:00Z');
const BERLIN_NET =
  'Guten Tag, wir machen die Reparatur für EUR 245,00 zzgl. MwSt. Die Anfahrt von 35 EUR kommt hinzu. Termin ab 3. Dezember.';

/** What the loopback model answers next, and what it was asked. */
let next = '';
/** Whether the loopback model answers 500 to a request for JSON of a schema. */
let failing = false;
const asked: Record<string, unknown>[] = [];
let model: http.Server;
let reference: TestServers;
let servers: TestServers;

beforeAll(async () => {
  model = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (t: string) => (body += t));
    req.on('end', () => {
      const request = JSON.parse(body) as Record<string, unknown>;
      asked.push(request);
      if (failing && request.response_format !== undefined) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'upstream down', type: 'server_error' } }));
        return;
      }
      const usage = { prompt_tokens: 50, completion_tokens: 40, total_tokens: 90 };
      if (request.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: object, finish: string | null, extra = {}) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
        res.write(chunk({ role: 'assistant', content: next }, null));
        res.write(chunk({}, 'stop'));
        res.write(
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: next }, finish_reason: 'stop' }],
          usage,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  const port = (model.address() as AddressInfo).port;
  reference = await startTestServers('pglite', { which: ['model'] });
  servers = await startTestServers('pglite', {
    which: ['model'],
    env: {
      MODEL_ENGINES: JSON.stringify({
        queen: { type: 'upstream', baseUrl: `http://127.0.0.1:${port}/v1`, retries: 0 },
        king: { type: 'upstream', baseUrl: `${reference.urls.model}/v1`, apiKey: reference.adminKey },
      }),
    },
  });
}, 120_000);

afterAll(async () => {
  await servers?.stop();
  await reference?.stop();
  model?.closeAllConnections();
  await new Promise((resolve) => model?.close(resolve));
});

const agent = () =>
  httpAgent(() => servers.urls.model!, { secret: async () => servers.adminKey, replace: async () => {} });

async function read(reply: string, agentsModel?: string) {
  const run = await agent().structured({
    instructions: READING_INSTRUCTIONS,
    input: reply,
    name: 'quote_reading',
    schema: READING_SCHEMA as unknown as Record<string, unknown>,
    seed: 7,
    metadata: agentsModel ? { agents_model: agentsModel } : {},
  });
  return checkedReading(run.text, reply, received, readQuote(reply, received, 'DE'));
}

const answer = (over: Record<string, unknown>) =>
  JSON.stringify({
    declined: false,
    price_type: 'fixed',
    amount: null,
    amount_high: null,
    currency: 'EUR',
    vat: 'unknown',
    vat_rate: null,
    hours_low: null,
    hours_high: null,
    quantity: null,
    quantity_high: null,
    quantity_unit: null,
    fees: [],
    available_from: null,
    valid_until: null,
    includes: [],
    excludes: [],
    ...over,
  });

describe('an answer read by the upstream model, its figures checked by code', () => {
  it('asks through the Responses API with the JSON schema, and keeps a reading whose figures are written', async () => {
    next = answer({
      amount: 245,
      vat: 'net',
      fees: [{ label: 'Anfahrt', amount: 35 }],
      available_from: '2026-12-03',
    });
    const reading = await read(BERLIN_NET);
    const request = asked.at(-1)!;
    expect(request.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'quote_reading' },
    });
    expect(reading).toMatchObject({
      read_by: 'model',
      dropped: [],
      amount: '245.00',
      currency: 'EUR',
      vat: { basis: 'net' },
      fees: [{ label: 'Anfahrt', amount: '35.00' }],
      available_from: '2026-12-03',
    });
    expect(reading.amount_quote).toContain('245,00');
    expect(reading.fees[0]?.quote).toContain('35 EUR');
  });

  it('refuses a figure the answer does not contain, and the rules read it', async () => {
    // 291.55 is 245 × 1.19: computed, not written
    next = answer({ amount: 291.55, vat: 'gross', fees: [{ label: 'Anfahrt', amount: 35 }] });
    const reading = await read(BERLIN_NET);
    expect(reading.read_by).toBe('rules');
    expect(reading.dropped).toEqual([
      { field: 'amount', value: '291.55', reason: 'not written in the answer' },
    ]);
    expect(reading).toMatchObject({ amount: '245.00', vat: { basis: 'net' } });
    next = answer({ amount: 245, available_from: '2026-12-24' });
    expect((await read(BERLIN_NET)).dropped).toEqual([
      { field: 'available_from', value: '2026-12-24', reason: 'no such date in the answer' },
    ]);
  });

  it("asks for a unit price's quantity, a range too, and keeps it only as the answer writes it", async () => {
    expect(READING_SCHEMA.required).toEqual(
      expect.arrayContaining(['quantity', 'quantity_high', 'quantity_unit']),
    );
    const tiles = 'Fliesen verlegen: 45 € pro m² zzgl. MwSt., je nach Raum 15 bis 20 m².';
    const perUnit = { price_type: 'per_unit', amount: 45, vat: 'net' };
    next = answer({ ...perUnit, quantity: 15, quantity_high: 20, quantity_unit: 'm²' });
    const reading = await read(tiles);
    expect(reading).toMatchObject({
      read_by: 'model',
      dropped: [],
      price_type: 'per_unit',
      unit: 'm²',
      quantity: { value: 15, high: 20, unit: 'm²' },
    });
    expect(reading.quantity?.quote).toContain('15 bis 20');
    // a quantity the answer does not write (the model's guess of a room), or in another kind of unit
    next = answer({ ...perUnit, quantity: 18, quantity_high: null, quantity_unit: 'm²' });
    expect(await read(tiles)).toMatchObject({
      read_by: 'rules',
      dropped: [{ field: 'quantity.value', value: '18', reason: 'not written in the answer' }],
      quantity: { value: 15, high: 20, unit: 'm²' },
    });
    next = answer({ ...perUnit, quantity: 15, quantity_high: 20, quantity_unit: 'Tage' });
    expect((await read(tiles)).dropped).toEqual([
      { field: 'quantity.unit', value: 'Tage', reason: 'not written in the answer' },
    ]);
    const days = 'Fliesen: 45 € pro m² zzgl. MwSt., Arbeitszeit 3 Tage.';
    next = answer({ ...perUnit, quantity: 3, quantity_high: null, quantity_unit: 'Tage' });
    expect((await read(days)).dropped).toEqual([
      { field: 'quantity.unit', value: 'Tage', reason: "not a unit of the price's (m²)" },
    ]);
  });

  it('keeps the rules reading when the model answers no JSON of the schema', async () => {
    next = 'The price is 245 EUR.';
    const reading = await read(BERLIN_NET);
    expect(reading.read_by).toBe('rules');
    expect(reading.dropped[0]?.field).toBe('reading');
    expect(reading.amount).toBe('245.00');
  });

  it('on the reference engine upstream: whatever it answers, a kept figure is one the answer contains', async () => {
    const replies = [
      BERLIN_NET,
      '289 EUR including parts, call-out fee and VAT. We can come on Monday.',
      'Our rate is 65 EUR per hour, about 3 hours, plus VAT.',
      'Bonjour, 1 250 € HT pour le remplacement, plus 60 € de déplacement, disponible le 3 décembre.',
    ];
    for (const reply of replies) {
      const reading = await read(reply, 'king');
      const figures = [reading.amount, reading.amount_high, ...reading.fees.map((f) => f.amount)].filter(
        (x): x is string => x !== null,
      );
      if (reading.read_by === 'model') {
        for (const figure of figures)
          expect(reply.replace(/\s/g, '')).toContain(String(Math.trunc(Number(figure))));
      } else {
        expect(reading).toEqual({ ...readQuote(reply, received, 'DE'), dropped: reading.dropped });
      }
    }
  });
});

async function readBrief(brief: string, hints: BriefHints = {}, agentsModel?: string) {
  const run = await agent().structured({
    instructions: BRIEF_INSTRUCTIONS,
    input: briefInput(brief, received),
    name: 'brief_reading',
    schema: BRIEF_SCHEMA as unknown as Record<string, unknown>,
    seed: 7,
    metadata: agentsModel ? { agents_model: agentsModel } : {},
  });
  return checkedUnderstanding(run.text, brief, hints, received, understand(brief, hints, null, received));
}

// the rules read "flat" as an estate agent's and miss "three quotes": the model reads it right
const LYON = 'We need our flat rewired in Lyon next week, three quotes please.';
const HAMBURG =
  'Wir suchen drei Installateure in Hamburg für den Tausch einer Gastherme in der Woche vom 14. Dezember.';

const briefAnswer = (over: Record<string, unknown>) => modelBriefAnswer({ language: 'en', ...over });

describe('a brief read by the upstream model, each part checked by code', () => {
  it('asks through the Responses API with the JSON schema, and keeps a reading that holds', async () => {
    const rules = understand(LYON, {}, null, received);
    expect(rules).toMatchObject({ trade: { activity: '68.31' }, max_providers: 5 });
    next = briefAnswer({
      activity: '43.21',
      place: 'Lyon',
      country: 'FR',
      max_providers: 3,
      when_kind: 'window',
      when_from: '2026-11-30',
      when_to: '2026-12-06',
      when_text: 'next week',
    });
    const u = await readBrief(LYON);
    expect(asked.at(-1)!.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'brief_reading' },
    });
    expect(u).toMatchObject({
      read_by: 'model',
      dropped: [],
      language: 'en',
      trade: { activity: '43.21', name: 'Electrical installation' },
      place: { query: 'Lyon', country: 'FR' },
      max_providers: 3,
      when: { kind: 'window', from: '2026-11-30', to: '2026-12-06', text: 'next week' },
      deadline: '2026-12-06',
    });
    expect(u.description).toContain('Place: Lyon');
  });

  it('refuses a count or a date the brief does not write, and keeps the rules for that part', async () => {
    next = briefAnswer({
      language: 'de',
      activity: '43.22',
      place: 'Hamburg',
      max_providers: 4,
      when_kind: 'window',
      when_from: '2026-12-14',
      when_to: '2026-12-24',
      when_text: 'in der Woche vom 14. Dezember',
    });
    const u = await readBrief(HAMBURG);
    expect(u.read_by).toBe('model');
    expect(u.dropped).toEqual([
      { field: 'max_providers', value: '4', reason: 'no such number in the brief' },
      {
        field: 'when.to',
        value: '2026-12-24',
        reason: 'no such date in the brief, nor derived from its words',
      },
    ]);
    expect(u).toMatchObject({
      max_providers: 3,
      when: { kind: 'window', from: '2026-12-14', to: '2026-12-20' },
      deadline: '2026-12-20',
      trade: { activity: '43.22' },
      place: { country: 'DE' },
    });
  });

  it('refuses a NACE class not in the trade table and a place the gazetteer or the brief does not have', async () => {
    next = briefAnswer({ activity: '43.27', place: 'Atlantis', max_providers: 3 });
    const u = await readBrief(LYON);
    expect(u.dropped).toEqual([
      {
        field: 'trade.activity',
        value: '43.27',
        reason: "no such NACE class in the directory's trade table",
      },
      { field: 'place', value: 'Atlantis', reason: 'not written in the brief' },
    ]);
    expect(u).toMatchObject({ read_by: 'model', trade: { activity: '68.31' }, place: { query: 'Lyon' } });
    expect(u.max_providers).toBe(3);
    next = briefAnswer({ place: 'Lyon', country: 'DE' });
    expect((await readBrief(LYON)).dropped).toEqual([
      { field: 'place', value: 'Lyon', reason: 'no such place in the gazetteer' },
    ]);
  });

  it('refuses a language the brief is not written in, and a wish it does not ask for', async () => {
    next = briefAnswer({ language: 'fr', requirements: ['urgency'], max_providers: 3 });
    const u = await readBrief(HAMBURG);
    expect(u.dropped).toEqual([
      { field: 'language', value: 'fr', reason: "the brief's words are not of that language" },
      { field: 'requirements', value: 'urgency', reason: 'not asked in the brief' },
    ]);
    expect(u).toMatchObject({ read_by: 'model', language: 'de', requirements: [], max_providers: 3 });
  });

  it('keeps the rules reading whole when the model answers no JSON of the schema', async () => {
    next = 'Three electricians in Lyon.';
    const u = await readBrief(LYON);
    expect(u).toEqual({
      ...understand(LYON, {}, null, received),
      dropped: [
        {
          field: 'understanding',
          value: 'Three electricians in Lyon.',
          reason: 'not the JSON the schema asks for',
        },
      ],
    });
    expect(u.read_by).toBe('rules');
  });

  it('lets the hints win over the model', async () => {
    next = briefAnswer({ activity: '43.21', max_providers: 3 });
    const u = await readBrief(LYON, { activity: '43.22', max_providers: 2 });
    expect(u).toMatchObject({ read_by: 'model', trade: { activity: '43.22' }, max_providers: 2 });
  });

  it('on the reference engine upstream: whatever it answers, a kept part is one the brief holds', async () => {
    for (const brief of [LYON, HAMBURG, 'Trzech hydraulików w Krakowie, do 11 grudnia.']) {
      const rules = understand(brief, {}, null, received);
      const u = await readBrief(brief, {}, 'king');
      if (u.read_by === 'rules') {
        expect(u).toEqual({ ...rules, dropped: u.dropped });
        continue;
      }
      expect(u.language).toBe(rules.language);
      for (const r of u.requirements) expect(rules.requirements).toContain(r);
      if (u.max_providers !== rules.max_providers) expect(brief).toMatch(/three|drei|trzech|\d/i);
      for (const day of [u.when?.from, u.when?.to].filter(Boolean))
        expect([rules.when?.from, rules.when?.to]).toContain(day);
    }
  });
});

describe('the planning stage with an upstream model', () => {
  const row = {
    id: 'wf_model_brief',
    brief: LYON,
    hints: {},
    created: Math.floor(received.getTime() / 1000),
  } as unknown as WorkflowRow;
  const stageRun = (model: boolean): StageRun => {
    const a = agent();
    return {
      signal: new AbortController().signal,
      agent: (call: AgentCall) => a.run(call),
      ...(model ? { structured: (call: StructuredCall) => a.structured(call) } : {}),
      // no workflow row here: the first reading is kept nowhere (workflows-retry.test.ts keeps it)
      store: { keepBriefReading: async (_id: string, reading: BriefReading) => reading },
    } as unknown as StageRun;
  };
  const understandingOf = async (model: boolean) => {
    const moved = await plan(row, stageRun(model));
    return moved && 'set' in moved ? moved.set?.understanding : undefined;
  };

  it('plans on the checked model reading, and on the rules alone without a model', async () => {
    next = briefAnswer({ activity: '43.21', place: 'Lyon', max_providers: 3 });
    expect(await understandingOf(true)).toMatchObject({
      read_by: 'model',
      trade: { activity: '43.21' },
      max_providers: 3,
    });
    expect(await understandingOf(false)).toEqual(understand(LYON, {}, null, received));
  });

  it('plans on the rules when the upstream fails: the brief never fails for it', async () => {
    failing = true;
    try {
      const u = await understandingOf(true);
      expect(u).toMatchObject({
        ...understand(LYON, {}, null, received),
        read_by: 'rules',
        dropped: [{ field: 'understanding', value: '' }],
      });
      expect(u?.dropped[0]?.reason).toMatch(/^the model did not answer/);
    } finally {
      failing = false;
    }
  });
});
