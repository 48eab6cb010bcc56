// The one SSE writer: its events read back by eventsource-parser (the WHATWG parsing), a
// keep-alive comment on a quiet stream, and nothing written once the client has gone.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { openSse, type SseWriter } from './sse.ts';

async function serve(stream: (writer: SseWriter) => Promise<void>, keepAliveMs?: number) {
  const app = express().get('/events', (_req, res) => {
    const writer = openSse(res, keepAliveMs === undefined ? {} : { keepAliveMs });
    void stream(writer).finally(() => writer.end());
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, server };
}

describe('openSse', () => {
  it('writes JSON events, named ones, a raw [DONE] and ends', async () => {
    const { url, server } = await serve(async (w) => {
      w.send({ n: 1 });
      w.send({ type: 'response.created' }, 'response.created');
      w.sendRaw('[DONE]');
    });
    try {
      const res = await fetch(url);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const events: Array<{ event: string | undefined; data: string }> = [];
      const parser = createParser({ onEvent: (e) => events.push({ event: e.event, data: e.data }) });
      parser.feed(await res.text());
      expect(events).toEqual([
        { event: undefined, data: '{"n":1}' },
        { event: 'response.created', data: '{"type":"response.created"}' },
        { event: undefined, data: '[DONE]' },
      ]);
    } finally {
      server.close();
    }
  });

  it('sends keep-alive comments while the stream is quiet', async () => {
    const { url, server } = await serve(async (w) => {
      await delay(400);
      w.send({ n: 1 });
    }, 100);
    try {
      const text = await (await fetch(url)).text();
      expect(text.startsWith(': keep-alive\n\n')).toBe(true);
      expect(text.endsWith('data: {"n":1}\n\n')).toBe(true);
      const comments: string[] = [];
      createParser({ onEvent: () => undefined, onComment: (c) => comments.push(c) }).feed(text);
      expect(comments.length).toBeGreaterThanOrEqual(1);
      expect(new Set(comments)).toEqual(new Set(['keep-alive']));
    } finally {
      server.close();
    }
  });

  it('is closed once the client has gone, and writes nothing more', async () => {
    let writer: SseWriter | undefined;
    const { url, server } = await serve(async (w) => {
      writer = w;
      w.send({ n: 1 });
      await delay(2000);
    }, 50);
    try {
      const abort = new AbortController();
      const res = await fetch(url, { signal: abort.signal });
      const reader = res.body!.getReader();
      await reader.read();
      abort.abort();
      await reader.cancel().catch(() => undefined);
      const deadline = Date.now() + 2000;
      while (!writer?.closed && Date.now() < deadline) await delay(20);
      expect(writer?.closed).toBe(true);
      expect(() => writer?.send({ n: 2 })).not.toThrow();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
