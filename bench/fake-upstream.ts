// The upstream of bench/gateway.ts: a bare node:http server speaking the OpenAI chat completions
// wire format, as an inference server (vLLM, llama.cpp server) would, with a fixed latency and no
// work of its own. Every gateway measured relays to it, so what a gateway adds is what it costs.
//
// The timing of an answer is read from the request's last message, which every gateway relays
// unchanged: `latency=50` (ms before the first byte), `gap=5` (ms between streamed chunks) and
// `chunks=16` (content chunks of a stream). `stream: true` answers server-sent events, each chunk
// a `chat.completion.chunk` (the usage in the last one when `stream_options.include_usage`),
// then `data: [DONE]`; otherwise one `chat.completion` after the latency.
// `PORT=0 node bench/fake-upstream.ts` prints its port on stdout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const WORDS = 'Hello there, this is a short answer from the fake upstream of the gateway benchmark.'.split(
  ' ',
);

interface Timing {
  latency: number;
  gap: number;
  chunks: number;
}

function timingOf(body: { messages?: { content?: unknown }[] }): Timing {
  const last = body.messages?.at(-1)?.content;
  const text = typeof last === 'string' ? last : '';
  const read = (name: string, fallback: number) => {
    const match = new RegExp(`${name}=(\\d+)`).exec(text);
    return match ? Number(match[1]) : fallback;
  };
  return { latency: read('latency', 0), gap: read('gap', 0), chunks: read('chunks', 16) };
}

let counter = 0;

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[{"id":"prince","object":"model","created":0,"owned_by":"bench"}]}');
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    let body: {
      model?: string;
      stream?: boolean;
      stream_options?: { include_usage?: boolean };
      messages?: { content?: unknown }[];
    };
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8')) as typeof body;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
      return;
    }
    const timing = timingOf(body);
    const id = `chatcmpl-fake${++counter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? 'prince';
    const usage = { prompt_tokens: 24, completion_tokens: timing.chunks, total_tokens: 24 + timing.chunks };
    const words = Array.from({ length: timing.chunks }, (_, i) => `${WORDS[i % WORDS.length]} `);
    if (body.stream !== true) {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: words.join('').trimEnd() },
                finish_reason: 'stop',
              },
            ],
            usage,
          }),
        );
      }, timing.latency);
      return;
    }
    const chunk = (delta: object, finish: string | null, withUsage = false) =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...(withUsage ? { usage } : {}),
      })}\n\n`;
    let sent = 0;
    const next = () => {
      if (res.destroyed) return;
      if (sent === 0) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(chunk({ role: 'assistant', content: words[0] }, null));
      } else if (sent < timing.chunks) {
        res.write(chunk({ content: words[sent] }, null));
      } else {
        const include = body.stream_options?.include_usage === true;
        res.write(chunk({}, 'stop', false));
        if (include)
          res.write(
            `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`,
          );
        res.end('data: [DONE]\n\n');
        return;
      }
      sent++;
      if (timing.gap > 0) setTimeout(next, timing.gap);
      else next();
    };
    setTimeout(next, timing.latency);
  });
});
server.keepAliveTimeout = 60_000;

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
