import { createSocket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { openDb } from '../platform/db.ts';
import { secretBox } from '../platform/secrets.ts';
import { MIGRATIONS } from '../storage.ts';
import { dnsLookup, DnsLookupError } from './dns.ts';
import { SendingDomainStore } from './domains.ts';

/** A UDP socket on loopback that reads queries and never answers: a resolver gone silent. */
async function silentResolver(): Promise<{ server: string; close(): void }> {
  const socket = createSocket('udp4');
  socket.on('message', () => undefined);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { server: `127.0.0.1:${socket.address().port}`, close: () => socket.close() };
}

describe('DNS look-ups of sending domains', () => {
  it('a resolver that never answers is a timeout, and verify a 504 that leaves the domain unchanged', async () => {
    const silent = await silentResolver();
    const db = await openDb({ dataDir: 'memory://' }, MIGRATIONS);
    try {
      const lookup = dnsLookup({ servers: [silent.server], timeoutMs: 200, tries: 1 });
      const err = await lookup.txt('example.test').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DnsLookupError);
      expect(err).toMatchObject({ timedOut: true });

      const store = new SendingDomainStore(db, secretBox(Buffer.alloc(32, 7)), {
        inUse: async () => false,
        inboundHost: 'mx.eurus.test',
        spfInclude: 'spf.eurus.test',
        lookup,
      });
      const owner = { accountId: 'acct_1', projectId: 'proj_1' };
      const domain = await store.create(owner, { domain: 'mail.silent.test' });
      await expect(store.verify(owner.projectId, domain.id)).rejects.toMatchObject({
        status: 504,
        code: 'dns_timeout',
      });
      expect(await store.get(owner.projectId, domain.id)).toEqual(domain);
    } finally {
      silent.close();
      await db.close();
    }
  });
});
