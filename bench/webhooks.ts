// Webhook deliveries of one instance: `npm run bench:webhooks -- [--storage pglite|postgres]
// [--events 2000] [--trickle 200]`. Starts the directory API alone as a process (PGlite on
// disk, or a fresh PostgreSQL database at TEST_DATABASE_URL's server), a fast receiver on
// loopback (node:http, 204 at once), registers an endpoint and measures:
//   - the delay from an event to its first delivery attempt: `--trickle` test events sent one at
//     a time, 20 ms apart; the delay is the receiver's arrival time minus the time the
//     POST /test request was sent (p50, p99, max);
//   - deliveries per second: `--events` test events sent by 16 concurrent clients to an
//     instance started with JOB_WORKERS=0 (it queues, never delivers), which then stops; an
//     instance with the default JOB_WORKERS starts on the same database and delivers the
//     backlog. The rate is the deliveries over the time from the first arrival to the last, so
//     neither the senders nor start-up bound it. (`sends_per_second` is the API's rate.)
// The result is printed and written to bench/results/webhooks-<date>-<storage>.json.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createTestDatabase } from '../contract-tests/support/server.ts';
import { freePort, stop, waitFor } from './lib.ts';

const { values } = parseArgs({
  options: {
    storage: { type: 'string', default: 'pglite' },
    events: { type: 'string', default: '2000' },
    trickle: { type: 'string', default: '200' },
    port: { type: 'string' },
  },
});
const EVENTS = Math.min(Number(values.events), 20_000);
const TRICKLE = Math.min(Number(values.trickle), 2000);
const PORT = values.port ? Number(values.port) : await freePort();
const KEY = `sk_bench_webhooks_${randomBytes(12).toString('hex')}`;

const arrivals = new Map<string, number>();
const receiver = createServer((req, res) => {
  const at = performance.now();
  req.resume();
  req.on('end', () => {
    arrivals.set(String(req.headers['webhook-id']), at);
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const database = values.storage === 'postgres' ? await createTestDatabase() : undefined;
const databaseUrl = database?.url ?? '';
const dataDir = databaseUrl ? 'memory://' : mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
const start = (env: Record<string, string> = {}) =>
  spawn(process.execPath, ['src/main.ts', 'directory'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      DIRECTORY_API_PORT: String(PORT),
      INBOUND_SMTP_PORT: 'off',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      SECRETS_ENCRYPTION_KEY: '3b'.repeat(32),
      BOOTSTRAP_ADMIN_KEY: KEY,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      DEMO_LISTINGS: '100',
      LOG_LEVEL: 'warn',
      DIRECTORY_RATE_LIMIT_RPS: '100000',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
let server = start();
const base = `http://127.0.0.1:${PORT}`;
const ready = () => waitFor(`${base}/readyz`, server, { seconds: 120 });
try {
  await ready();
  const call = async (path: string, body?: object) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  const endpoint = await call('/v1/webhook-endpoints', { url: hook });
  const until = async (ids: string[]) => {
    while (!ids.every((id) => arrivals.has(id))) await new Promise((r) => setTimeout(r, 5));
  };

  // the delay from an event to its first attempt, one event at a time
  const delays: number[] = [];
  for (let i = 0; i < TRICKLE; i++) {
    const sent = performance.now();
    const { id } = await call(`/v1/webhook-endpoints/${endpoint.id}/test`);
    await until([id]);
    delays.push(arrivals.get(id)! - sent);
    await new Promise((r) => setTimeout(r, 20));
  }
  delays.sort((a, b) => a - b);
  const pct = (p: number) =>
    Math.round(delays[Math.min(delays.length - 1, Math.floor(p * delays.length))]! * 10) / 10;

  // deliveries per second: a backlog queued by an instance without workers, then delivered
  await stop(server);
  server = start({ JOB_WORKERS: '0' });
  await ready();
  const ids: string[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < EVENTS) {
        next++;
        ids.push((await call(`/v1/webhook-endpoints/${endpoint.id}/test`)).id);
      }
    }),
  );
  const sentAll = performance.now();
  await stop(server);
  server = start();
  await until(ids);
  const arrived = ids.map((id) => arrivals.get(id)!);
  const first = Math.min(...arrived);
  const last = Math.max(...arrived);
  const result = {
    storage: values.storage,
    date: new Date().toISOString(),
    events: EVENTS,
    trickle: TRICKLE,
    first_attempt_delay_ms: { p50: pct(0.5), p99: pct(0.99), max: pct(1) },
    sends_per_second: Math.round((EVENTS / (sentAll - started)) * 1000),
    deliveries_per_second: Math.round((EVENTS / (last - first)) * 1000),
    delivery_seconds: Math.round(last - first) / 1000,
    job_workers: 16,
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync('bench/results', { recursive: true });
  const stamp = new Date().toISOString().slice(0, 16).replace(/[:T]/g, '-');
  writeFileSync(
    `bench/results/webhooks-${stamp}-${values.storage}.json`,
    `${JSON.stringify(result, null, 2)}\n`,
  );
} finally {
  await stop(server);
  receiver.close();
  await database?.drop();
  if (!databaseUrl) rmSync(dataDir, { recursive: true, force: true });
}
