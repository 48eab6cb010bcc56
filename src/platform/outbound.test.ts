// The outbound guard against real peers: a DNS server on loopback (dns2) that answers a public
// address first and 127.0.0.1 next (DNS rebinding), and HTTP receivers that hang, flood or
// redirect.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkOutboundUrl,
  forbiddenRange,
  outbound,
  OutboundRefused,
  OutboundTimeout,
  OutboundTooLarge,
} from './outbound.ts';

describe('address ranges', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.0.0.1',
    '10.255.255.254',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '203.0.113.10',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::7f00:1',
    // IPv4-compatible (ipaddr.js calls it unicast), as typed and as a URL stores it
    '::127.0.0.1',
    '::7f00:1',
    '::10.0.0.1',
    '::a9fe:a9fe',
    '::0:0:0:a00:1',
    '64:ff9b::a00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::808:808',
    '2002:7f00:1::1',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  ])('refuses %s', (address) => {
    expect(forbiddenRange(address)).toBeDefined();
  });

  it.each([
    '93.184.215.14',
    '1.1.1.1',
    '2a00:1450:4001:80b::200e',
    '::ffff:93.184.215.14',
    // a public IPv4 address through the NAT64 well-known prefix is that public address
    '64:ff9b::808:808',
  ])('allows %s', (address) => {
    expect(forbiddenRange(address)).toBeUndefined();
  });
});

describe('address ranges of upstreams the operator configured (MODEL_ENGINES)', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.5',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '::1',
    'fd12:3456::1',
    '::ffff:10.0.0.1',
    '1.1.1.1',
  ])('allows %s (a network of the operator, or the internet)', (address) => {
    expect(forbiddenRange(address, 'operator')).toBeUndefined();
  });

  it.each([
    ['169.254.169.254', 'linkLocal'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
  ])('refuses %s (%s): no upstream lives there, the cloud metadata service does', (address, range) => {
    expect(forbiddenRange(address, 'operator')).toBe(range);
  });
});

describe('URLs as they are saved', () => {
  const strict = { allowPrivate: false };
  it.each([
    ['http://hooks.example.com/x', 'insecure_url'],
    ['ftp://hooks.example.com/x', 'insecure_url'],
    ['https://127.0.0.1/hook', 'private_network_url'],
    ['https://10.1.2.3/hook', 'private_network_url'],
    ['https://169.254.169.254/latest/meta-data', 'private_network_url'],
    ['https://[::1]/hook', 'private_network_url'],
    ['https://[::ffff:127.0.0.1]/hook', 'private_network_url'],
    ['https://[::127.0.0.1]/hook', 'private_network_url'],
    ['https://[::a9fe:a9fe]/latest/meta-data', 'private_network_url'],
    ['https://[64:ff9b::10.0.0.1]/hook', 'private_network_url'],
    ['https://[2002:a00:1::1]/hook', 'private_network_url'],
    ['https://localhost/hook', 'private_network_url'],
    ['https://user:pw@hooks.example.com/x', 'invalid_url'],
    ['not a url', 'invalid_url'],
    ['https://\u00cf', 'invalid_url'],
    ['https://hooks.example.com/a b', 'invalid_url'],
  ])('refuses %s (%s)', async (url, code) => {
    const refused = await checkOutboundUrl(url, strict).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OutboundRefused);
    expect((refused as OutboundRefused).code).toBe(code);
  });

  it('allows plain http and private addresses when told to', async () => {
    const url = await checkOutboundUrl('http://127.0.0.1:9/hook', { allowPrivate: true });
    expect(url.href).toBe('http://127.0.0.1:9/hook');
  });
});

describe('against real peers', () => {
  let dns: ReturnType<typeof dns2.createServer>;
  let dnsPort = 0;
  let answers = 0;
  let metaAnswers = 0;
  let receiver: Server;
  let port = 0;
  const hits: string[] = [];

  beforeAll(async () => {
    dns = dns2.createServer({
      udp: true,
      handle: (request, send) => {
        const response = dns2.Packet.createResponseFromRequest(request);
        const [question] = request.questions;
        if (question && question.type === dns2.Packet.TYPE.A) {
          let address: string;
          if (question.name.startsWith('meta.')) {
            // an operator's upstream on loopback first, the cloud metadata service next
            metaAnswers++;
            address = metaAnswers === 1 ? '127.0.0.1' : '169.254.169.254';
          } else {
            // public while the URL is checked, loopback when the connection is made
            answers++;
            address = answers === 1 ? '93.184.215.14' : '127.0.0.1';
          }
          response.answers.push({
            name: question.name,
            type: dns2.Packet.TYPE.A,
            class: dns2.Packet.CLASS.IN,
            ttl: 0,
            address,
          } as unknown as (typeof response.answers)[number]); // dns2's type wants a class instance
        }
        void send(response);
      },
    });
    await dns.listen({ udp: { port: 0, address: '127.0.0.1' } });
    dnsPort = (dns.addresses().udp as AddressInfo).port;

    receiver = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/hang') return; // never answers
      if (req.url === '/slow-body') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first');
        return; // the rest never comes
      }
      if (req.url?.startsWith('/upstream')) {
        // each answer closes its connection, so the next call looks the name up again
        res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('ok');
        return;
      }
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://127.0.0.1/elsewhere' }).end();
        return;
      }
      if (req.url === '/flood') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const more = () => {
          while (sent < 50 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
        return;
      }
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await dns.close();
  });

  it('refuses a name that resolved to a public address when saved and to 127.0.0.1 when called', async () => {
    const policy = { allowPrivate: false, dnsServers: [`127.0.0.1:${dnsPort}`] };
    const url = `https://hooks.rebind.test:${port}/rebound`;
    expect((await checkOutboundUrl(url, policy)).hostname).toBe('hooks.rebind.test');
    const client = outbound(policy);
    try {
      const refused = await client
        .request(url, { method: 'POST', headers: {}, body: '{}' })
        .catch((err: unknown) => err);
      const cause = (refused as { cause?: unknown }).cause ?? refused;
      expect(cause).toBeInstanceOf(OutboundRefused);
      expect((cause as OutboundRefused).code).toBe('private_network_url');
      expect(answers).toBeGreaterThanOrEqual(2);
      expect(hits).not.toContain('/rebound');
    } finally {
      await client.close();
    }
  });

  it('refuses the rebound name through its fetch too (the MCP client connects with it)', async () => {
    answers = 0;
    const policy = { allowPrivate: false, dnsServers: [`127.0.0.1:${dnsPort}`] };
    const url = `https://hooks.rebind.test:${port}/rebound-fetch`;
    await checkOutboundUrl(url, policy);
    const client = outbound(policy);
    try {
      const refused = await client.fetch(url, { method: 'POST' }).catch((err: unknown) => err);
      const cause = (refused as { cause?: unknown }).cause ?? refused;
      expect(cause).toBeInstanceOf(OutboundRefused);
      expect(hits).not.toContain('/rebound-fetch');
      await expect(client.fetch(`https://127.0.0.1:${port}/literal-fetch`)).rejects.toBeInstanceOf(
        OutboundRefused,
      );
    } finally {
      await client.close();
    }
  });

  it('gives up on a receiver that does not answer, at the timeout', async () => {
    const client = outbound({ allowPrivate: true });
    try {
      const started = Date.now();
      await expect(
        client.request(`http://127.0.0.1:${port}/hang`, { method: 'POST', headers: {}, timeoutMs: 500 }),
      ).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await client.close();
    }
  });

  it('reads 1 KiB of a 50 MB answer and drops the rest unread', async () => {
    const client = outbound({ allowPrivate: true });
    try {
      const before = process.memoryUsage().rss;
      const started = Date.now();
      const answer = await client.request(`http://127.0.0.1:${port}/flood`, {
        method: 'POST',
        headers: {},
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toHaveLength(1024);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(process.memoryUsage().rss - before).toBeLessThan(20 * 1024 * 1024);
    } finally {
      await client.close();
    }
  });

  it('does not follow a redirect', async () => {
    const client = outbound({ allowPrivate: true });
    try {
      const answer = await client.request(`http://127.0.0.1:${port}/redirect`, {
        method: 'POST',
        headers: {},
      });
      expect(answer.status).toBe(302);
      expect(hits).not.toContain('/elsewhere');
    } finally {
      await client.close();
    }
  });

  it('refuses a literal private address when private addresses are not allowed', async () => {
    const client = outbound({ allowPrivate: false });
    try {
      await expect(
        client.request(`https://127.0.0.1:${port}/literal`, { method: 'POST', headers: {} }),
      ).rejects.toBeInstanceOf(OutboundRefused);
      expect(hits).not.toContain('/literal');
    } finally {
      await client.close();
    }
  });

  const openInit = {
    method: 'POST' as const,
    headers: {},
    body: '{}',
    origin: 'operator' as const,
    connectTimeoutMs: 1000,
    firstByteTimeoutMs: 1000,
    totalTimeoutMs: 2000,
    maxBodyBytes: 1024 * 1024,
  };
  const read = async (call: ReturnType<ReturnType<typeof outbound>['open']>) => {
    try {
      const head = await call.response;
      const parts: Buffer[] = [];
      for await (const part of call.body()) parts.push(part);
      return { status: head.status, body: Buffer.concat(parts).toString() };
    } catch (error) {
      throw call.cause(error);
    } finally {
      call.close();
    }
  };

  it('opens an upstream of the operator on 127.0.0.1, which a URL of a customer may not reach', async () => {
    const client = outbound({ allowPrivate: false });
    try {
      const url = new URL(`http://127.0.0.1:${port}/upstream-literal`);
      expect(await read(client.open(url, openInit))).toEqual({ status: 200, body: 'ok' });
      await expect(read(client.open(url, { ...openInit, origin: 'customer' }))).rejects.toBeInstanceOf(
        OutboundRefused,
      );
    } finally {
      await client.close();
    }
  });

  it('refuses an upstream of the operator at the cloud metadata address, before connecting', async () => {
    const client = outbound({ allowPrivate: false });
    try {
      const refused = await read(client.open(new URL('http://169.254.169.254/v1/chat'), openInit)).catch(
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(OutboundRefused);
      expect((refused as Error).message).toBe('169.254.169.254 is a linkLocal address');
    } finally {
      await client.close();
    }
  });

  it('refuses an upstream name of the operator that rebinds from 127.0.0.1 to 169.254.169.254', async () => {
    const client = outbound({ allowPrivate: false, dnsServers: [`127.0.0.1:${dnsPort}`] });
    try {
      const url = new URL(`http://meta.upstream.test:${port}/upstream-rebound`);
      expect(await read(client.open(url, openInit))).toEqual({ status: 200, body: 'ok' });
      const before = hits.length;
      const refused = await read(client.open(url, openInit)).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(OutboundRefused);
      expect((refused as Error).message).toMatch(/169\.254\.169\.254, a linkLocal address/);
      expect(metaAnswers).toBe(2);
      expect(hits.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('bounds a streamed call: the body cap, the first-byte and total timeouts, the abort of the caller, no redirect', async () => {
    const client = outbound({ allowPrivate: false });
    try {
      const at = (path: string) => new URL(`http://127.0.0.1:${port}${path}`);
      const large = await read(client.open(at('/flood'), { ...openInit, maxBodyBytes: 256 * 1024 })).catch(
        (err: unknown) => err,
      );
      expect(large).toBeInstanceOf(OutboundTooLarge);
      const silent = await read(client.open(at('/hang'), { ...openInit, firstByteTimeoutMs: 200 })).catch(
        (err: unknown) => err,
      );
      expect(silent).toBeInstanceOf(OutboundTimeout);
      expect([(silent as OutboundTimeout).phase, (silent as OutboundTimeout).ms]).toEqual([
        'first_byte',
        200,
      ]);
      // the first byte came, the rest never does: the whole exchange's bound ends it
      const slow = client.open(at('/slow-body'), { ...openInit, totalTimeoutMs: 300 });
      slow.firstByte();
      const stalled = await read(slow).catch((err: unknown) => err);
      expect([(stalled as OutboundTimeout).phase, (stalled as OutboundTimeout).ms]).toEqual(['total', 300]);
      const controller = new AbortController();
      const gone = new Error('the client left');
      setTimeout(() => controller.abort(gone), 100);
      const aborted = await read(client.open(at('/hang'), { ...openInit, signal: controller.signal })).catch(
        (err: unknown) => err,
      );
      expect(aborted).toBe(gone);
      const redirect = await read(client.open(at('/redirect'), openInit));
      expect(redirect.status).toBe(302);
      expect(hits).not.toContain('/elsewhere');
    } finally {
      await client.close();
    }
  });
});

describe('header values', () => {
  it('refuses a header undici cannot send, and the next call to the same origin still answers', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const client = outbound({ allowPrivate: true });
    try {
      for (const bad of ['Bearer a\nb', 'Bearer \u4e2d', 'x\u0000']) {
        await expect(client.request(url, { method: 'GET', headers: { authorization: bad } })).rejects.toThrow(
          TypeError,
        );
      }
      const answer = await client.request(url, {
        method: 'GET',
        headers: { authorization: 'Bearer é-ok' },
        timeoutMs: 3000,
      });
      expect(answer).toMatchObject({ status: 200, body: 'ok' });
    } finally {
      await client.close();
      server.close();
    }
  });
});
