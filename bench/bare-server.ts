// The baseline of bench/model.ts: a bare node:http server that answers POST /v1/chat/completions
// with the JSON body (or the SSE events) our model service answered, read from BENCH_BODY_FILE
// ({ json, stream: string[] }). It reads the request body, as any server must, and does nothing else.
// `BENCH_BODY_FILE=... PORT=0 node bench/bare-server.ts` prints its port on stdout.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const file = process.env.BENCH_BODY_FILE;
if (!file) throw new Error('BENCH_BODY_FILE is required');
const recorded = JSON.parse(readFileSync(file, 'utf8')) as { json: string; stream: string[] };

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(recorded.json);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const event of recorded.stream) res.write(event);
    res.end();
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
