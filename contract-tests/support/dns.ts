// A real DNS server on loopback for tests (dns2, over UDP on a free port of 127.0.0.1), serving
// the records a test publishes, as a customer publishes them at their DNS provider. Point the
// service at it with `DNS_SERVERS: dns.server` and check signatures against it with
// `dns.resolve` (a node:dns resolver asking this server; mailauth takes it as its `resolver`).
//
//   const dns = await startTestDns();
//   dns.publish('eurus-abc._domainkey.mail.example.de', 'TXT', 'v=DKIM1; k=rsa; p=MIIB...');
//   dns.publish('reply.mail.example.de', 'MX', '10 mx.test');
//   dns.fail('broken.example.de');           // SERVFAIL for that name
//   ...
//   await dns.close();
//
// A name with no record of the type asked answers NOERROR with no answers when it has records
// of other types, else NXDOMAIN, as an authoritative server does. TXT values longer than 255
// bytes are sent as several character-strings (as providers publish DKIM keys).
import { Resolver } from 'node:dns/promises';
import { Packet, createServer } from 'dns2';

export type TestRecordType = 'TXT' | 'MX' | 'A';

export interface TestDns {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  server: string;
  port: number;
  /** Adds a record (several of one name and type make an RRset). MX values are `priority host`. */
  publish(name: string, type: TestRecordType, value: string): void;
  /** Removes the records of a name, of one type or all. */
  unpublish(name: string, type?: TestRecordType): void;
  /** Answers SERVFAIL for this name from now on. */
  fail(name: string): void;
  /** Resolves through this server only, as mailauth's `resolver` expects (`resolve(name, 'TXT')`). */
  resolve(name: string, type: string): Promise<unknown>;
  /** The queries answered, `TYPE name`, for tests that check what was asked. */
  queries: string[];
  close(): Promise<void>;
}

const norm = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** 255-byte character-strings (RFC 1035 3.3.14). */
function chunks(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255).toString('utf8'));
  return out.length ? out : [''];
}

/** Starts the server on `port` of 127.0.0.1 (a free one by default). */
export async function startTestDns(options: { port?: number } = {}): Promise<TestDns> {
  const zone = new Map<string, Array<{ type: TestRecordType; value: string }>>();
  const failing = new Set<string>();
  const queries: string[] = [];
  const server = createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      response.header.aa = 1;
      const [question] = request.questions;
      if (!question) {
        response.header.rcode = Packet.RCODE.FORMERR;
        void send(response);
        return;
      }
      const name = norm(question.name);
      const typeName = (Object.entries(Packet.TYPE).find(([, code]) => code === question.type)?.[0] ??
        String(question.type)) as string;
      queries.push(`${typeName} ${name}`);
      if (failing.has(name)) {
        response.header.rcode = Packet.RCODE.SERVFAIL;
        void send(response);
        return;
      }
      const records = zone.get(name);
      if (!records) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
        void send(response);
        return;
      }
      for (const record of records.filter((r) => r.type === typeName)) {
        const base = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
        if (record.type === 'TXT') {
          response.answers.push({ ...base, type: Packet.TYPE.TXT, data: chunks(record.value) } as never);
        } else if (record.type === 'MX') {
          const [priority, exchange] = record.value.split(/\s+/);
          response.answers.push({
            ...base,
            type: Packet.TYPE.MX,
            priority: Number(priority),
            exchange: exchange ?? '',
          } as never);
        } else {
          response.answers.push({ ...base, type: Packet.TYPE.A, address: record.value } as never);
        }
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: options.port ?? 0, address: '127.0.0.1' } });
  const port = (addresses as { udp?: { port: number } }).udp?.port ?? 0;
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return {
    server: `127.0.0.1:${port}`,
    port,
    queries,
    publish(name, type, value) {
      const key = norm(name);
      zone.set(key, [...(zone.get(key) ?? []), { type, value }]);
    },
    unpublish(name, type) {
      const key = norm(name);
      const left = type ? (zone.get(key) ?? []).filter((r) => r.type !== type) : [];
      if (left.length) zone.set(key, left);
      else zone.delete(key);
    },
    fail(name) {
      failing.add(norm(name));
    },
    resolve: (name, type) => resolver.resolve(name, type),
    async close() {
      await server.close();
    },
  };
}
