// DNS rebinding through the running service (issue 15, point 4): a webhook endpoint whose name
// resolved to a public address when it was saved, and resolves to 127.0.0.1 when an event is
// delivered, is refused at connect time: the attempt fails with the reason, and nothing on
// loopback ever sees a connection. The names are served by a real DNS server on loopback
// (OUTBOUND_DNS_SERVERS), changed between the two moments as an attacker's zone would be.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, until } from './support/client.ts';
import { startTestDns, type TestDns } from './support/dns.ts';
import { startTestServers, storages, type TestServers } from './support/server.ts';

interface Attempt {
  outcome: string;
  status_code: number | null;
  error: string | null;
}

describe.each(await storages())('the outbound guard of the running service on %s', (storage) => {
  let dns: TestDns;
  let servers: TestServers;
  let listener: Server;
  let port = 0;
  const connections: Socket[] = [];

  const call = (method: string, path: string, body?: object) =>
    send(servers.urls.directory!, servers.adminKey, method, path, body);

  beforeAll(async () => {
    // what would be hit on loopback if the guard let the rebound name through: any TCP connection
    listener = createServer((socket) => {
      connections.push(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as AddressInfo).port;
    dns = await startTestDns();
    servers = await startTestServers(storage, {
      which: ['directory'],
      env: {
        OUTBOUND_ALLOW_PRIVATE: 'false',
        OUTBOUND_DNS_SERVERS: dns.server,
        WEBHOOK_RETRY_SCHEDULE: '0s,200ms',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await servers?.stop();
    await dns?.close();
    await new Promise((resolve) => listener?.close(resolve));
  });

  it('refuses at create time a name that resolves to loopback', async () => {
    dns.publish('inside.rebind.test', 'A', '127.0.0.1');
    const refused = await call('POST', '/v1/webhook-endpoints', {
      url: `https://inside.rebind.test:${port}/hook`,
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/127\.0\.0\.1|loopback/);
    expect(dns.queries.some((q) => q.endsWith('inside.rebind.test'))).toBe(true);
  });

  it('refuses at delivery a name that resolved to a public address when saved and to loopback now', async () => {
    dns.publish('hooks.rebind.test', 'A', '93.184.216.34');
    const created = await call('POST', '/v1/webhook-endpoints', {
      url: `https://hooks.rebind.test:${port}/hook`,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const endpoint = created.body.id as string;

    // the attacker's zone now points the name at the service's own machine
    dns.unpublish('hooks.rebind.test');
    dns.publish('hooks.rebind.test', 'A', '127.0.0.1');

    const sent = await call('POST', `/v1/webhook-endpoints/${endpoint}/test`);
    expect(sent.status).toBe(202);
    const attempts = await until(
      'two attempts',
      async () => {
        const listed = await call('GET', `/v1/webhook-endpoints/${endpoint}/messages`);
        const message = (listed.body.data as Array<{ id: string; attempt_log: Attempt[] }>).find(
          (m) => m.id === sent.body.id,
        );
        return (message?.attempt_log.length ?? 0) >= 2 ? message!.attempt_log : undefined;
      },
      30_000,
    );
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ outcome: 'failed', status_code: null });
      expect(attempt.error).toMatch(/127\.0\.0\.1|loopback/);
    }
    expect(connections).toHaveLength(0);
  });
});
