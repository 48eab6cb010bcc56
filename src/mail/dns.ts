// DNS look-ups of a sending domain's records, through the resolvers of DNS_SERVERS (host[:port],
// comma-separated) or the system's. A name without the record is an answer (`missing`); a
// resolver that fails or does not answer is not, and the check fails as a whole.
import { Resolver } from 'node:dns/promises';
import { type DnsRecord, judge } from './records.ts';

export class DnsLookupError extends Error {
  readonly timedOut: boolean;
  constructor(message: string, timedOut: boolean) {
    super(message);
    this.name = 'DnsLookupError';
    this.timedOut = timedOut;
  }
}

export interface DnsOptions {
  /** DNS_SERVERS: `1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`; the system's resolvers when empty. */
  servers?: string[] | undefined;
  /** The time one query may take, each try; 2,500 ms by default (4 tries: about 10 s). */
  timeoutMs?: number;
  tries?: number;
}

/** An answer of "no such record": NXDOMAIN or no data of the type. */
const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN', 'ENONAME']);

export interface Lookup {
  txt(name: string): Promise<string[] | undefined>;
  mx(name: string): Promise<Array<{ priority: number; exchange: string }> | undefined>;
}

export function dnsLookup(options: DnsOptions = {}): Lookup {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2500, tries: options.tries ?? 4 });
  if (options.servers?.length) resolver.setServers(options.servers);
  const guard = async <T>(name: string, type: string, query: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await query();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (NO_RECORD.has(code)) return undefined;
      if (code === 'ETIMEOUT') throw new DnsLookupError(`the ${type} lookup of ${name} timed out`, true);
      throw new DnsLookupError(`the ${type} lookup of ${name} failed (${code || String(err)})`, false);
    }
  };
  return {
    // a TXT record of several strings (a 2048-bit DKIM key is longer than 255) is one value
    txt: (name) =>
      guard(name, 'TXT', async () => (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''))),
    mx: (name) => guard(name, 'MX', () => resolver.resolveMx(name)),
  };
}

/** Looks every record up and judges it; DMARC falls back to the parent domains' policy. */
export async function checkRecords(lookup: Lookup, records: DnsRecord[]): Promise<DnsRecord[]> {
  return Promise.all(
    records.map(async (record) => {
      if (record.type === 'MX') return { ...record, ...judge(record, await lookup.mx(record.name)) };
      let result = judge(record, await lookup.txt(record.name));
      if (record.purpose === 'dmarc' && result.status === 'missing') {
        // `_dmarc.mail.example.de` unset: the organisational domain's policy applies (RFC 7489 6.6.3)
        const labels = record.name.split('.').slice(1);
        for (let i = 1; result.status === 'missing' && labels.length - i >= 2; i++) {
          const parent = `_dmarc.${labels.slice(i).join('.')}`;
          const found = judge(record, await lookup.txt(parent));
          if (found.status !== 'missing') result = { ...found, found: `${parent}: ${found.found ?? ''}` };
        }
      }
      return { ...record, ...result };
    }),
  );
}
