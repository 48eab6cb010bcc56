// Regression: connections were unbounded (headers could trickle in for 66 s, nothing capped how
// many a client held), so a slowloris could hold sockets for as long as it liked. Slow clients
// come from 127.0.0.2, the normal client from 127.0.0.1 (both loopback).
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServers, type TestServers } from './support/server.ts';

function slowClient(url: string): { socket: Socket; closed: Promise<number> } {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), localAddress: '127.0.0.2' });
  const opened = Date.now();
  let timer: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    socket.write('GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    timer = setInterval(() => socket.write('a'), 200);
  });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve(Date.now() - opened);
    }),
  );
  return { socket, closed };
}

describe('slow and greedy clients are bounded; normal requests keep being served', () => {
  let servers: TestServers;
  let url: string;
  beforeAll(async () => {
    servers = await startTestServers('pglite', {
      which: ['model'],
      env: { HEADERS_TIMEOUT_MS: '1000', MAX_CONNECTIONS_PER_IP: '100' },
    });
    url = servers.urls.model ?? '';
  });
  afterAll(async () => {
    await servers?.stop();
  });

  const models = async () => {
    const res = await fetch(`${url}/v1/models`, {
      headers: { authorization: `Bearer ${servers.adminKey}`, connection: 'close' },
      signal: AbortSignal.timeout(5000),
    });
    await res.arrayBuffer();
    return res.status;
  };

  it('closes a connection whose headers trickle in past HEADERS_TIMEOUT_MS', async () => {
    const { closed } = slowClient(url);
    const heldMs = await closed;
    expect(heldMs).toBeGreaterThanOrEqual(900);
    expect(heldMs).toBeLessThan(3500); // the timeout plus the 1 s check interval, with slack
  });

  it('refuses connections over MAX_CONNECTIONS_PER_IP at once and serves other clients meanwhile', async () => {
    const slow = Array.from({ length: 150 }, () => slowClient(url));
    await new Promise((r) => setTimeout(r, 300));
    const early = await Promise.race([
      Promise.all(slow.slice(100).map((s) => s.closed)).then(() => 'over the cap closed'),
      new Promise((r) => setTimeout(() => r('still open'), 700)),
    ]);
    expect(early).toBe('over the cap closed');
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push(await models());
    expect(statuses.every((status) => status === 200)).toBe(true);
    for (const s of slow) s.socket.destroy();
  });
});
