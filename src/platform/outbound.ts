// The one door out: every HTTP call the product makes to an address a customer gave (webhook
// endpoints now; remote MCP servers, CRM base URLs and upstream engines as they move here) goes
// through `checkOutboundUrl` when the address is saved and `outboundRequest` when it is called.
// Both refuse loopback, private, link-local, multicast, reserved and unspecified addresses (IPv4
// and IPv6, IPv4-mapped included). The check is made again on the address the connection
// actually uses, inside the socket's own lookup, so a name that resolved to a public address at
// create time and to 127.0.0.1 now (DNS rebinding) is refused. OUTBOUND_ALLOW_PRIVATE=true
// lifts it (tests, on-premises installs). Answers are bounded: a timeout for the whole exchange,
// no redirects followed, and at most `maxBodyBytes` of the body read.
import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch, request } from 'undici';

/** A refused outbound address: the message says why, in words a customer understands. */
export class OutboundRefused extends Error {
  readonly code: 'insecure_url' | 'private_network_url' | 'invalid_url';
  constructor(message: string, code: OutboundRefused['code']) {
    super(message);
    this.code = code;
  }
}

export interface OutboundPolicy {
  /** OUTBOUND_ALLOW_PRIVATE: private addresses and plain http are allowed. */
  allowPrivate: boolean;
  /** Ask these DNS servers (`127.0.0.1:5353`) instead of the system's resolver. */
  dnsServers?: string[];
}

/** Every address `host` resolves to now, by the system's resolver or the policy's servers. */
async function resolveAll(host: string, policy: OutboundPolicy): Promise<LookupAddress[]> {
  const family = isIP(host);
  if (family) return [{ address: host, family }];
  if (!policy.dnsServers?.length) {
    return new Promise((resolve, reject) =>
      dnsLookup(host, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
    );
  }
  const resolver = new dnsPromises.Resolver({ timeout: 5000, tries: 2 });
  resolver.setServers(policy.dnsServers);
  const none = (err: NodeJS.ErrnoException) => {
    if (err.code === 'ENODATA' || err.code === 'ENOTFOUND') return [] as string[];
    throw err;
  };
  const [v4, v6] = await Promise.all([
    resolver.resolve4(host).catch(none),
    resolver.resolve6(host).catch(none),
  ]);
  const found = [
    ...v4.map((address) => ({ address, family: 4 })),
    ...v6.map((address) => ({ address, family: 6 })),
  ];
  if (found.length === 0) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  return found;
}

/** Why this address may not be called, or undefined when it may. */
export function forbiddenRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  // 'unicast' is the public internet in both families; everything else is somebody's own network,
  // this machine, or no single machine at all
  return range === 'unicast' ? undefined : range;
}

/** Checks a URL as it is saved: https (http only with private addresses allowed), and every address it resolves to public. */
export async function checkOutboundUrl(raw: string, policy: OutboundPolicy): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused(`${JSON.stringify(raw)} is not a URL`, 'invalid_url');
  }
  // a URI is ASCII (RFC 3986): an international host name is written in punycode (xn--)
  if (!/^[\x21-\x7e]+$/.test(raw) || !url.hostname) {
    throw new OutboundRefused(
      `${JSON.stringify(raw)} is not an ASCII URI; write an international host name in punycode (xn--)`,
      'invalid_url',
    );
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPrivate)) {
    throw new OutboundRefused(`the URL must be https, not ${url.protocol.replace(':', '')}`, 'insecure_url');
  }
  if (url.username || url.password) {
    throw new OutboundRefused('the URL must not carry a user name or password', 'invalid_url');
  }
  if (policy.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host, policy);
  } catch {
    throw new OutboundRefused(`the host ${host} does not resolve`, 'invalid_url');
  }
  for (const { address } of addresses) {
    const range = forbiddenRange(address);
    if (range) {
      throw new OutboundRefused(
        `the host ${host} resolves to ${address}, a ${range} address; only public addresses can be called`,
        'private_network_url',
      );
    }
  }
  return url;
}

/** A lookup that hands the socket only public addresses (the check at connect time). */
function guardedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, policy).then(
      (list) => {
        const allowed = policy.allowPrivate ? list : list.filter((a) => !forbiddenRange(a.address));
        if (allowed.length === 0) {
          const first = list[0]?.address ?? hostname;
          const refused = new OutboundRefused(
            `${hostname} resolves to ${first}, a ${forbiddenRange(first) ?? 'forbidden'} address`,
            'private_network_url',
          );
          return callback(refused as NodeJS.ErrnoException, '', 0);
        }
        if ((options as { all?: boolean }).all) {
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
        }
        return callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

export interface OutboundRequest {
  method: 'POST' | 'GET' | 'PUT' | 'PATCH' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** The whole exchange, connect to the last byte read; 15 s by default. */
  timeoutMs?: number;
  /** Read at most this much of the answer; the rest is dropped unread. 1 KiB by default. */
  maxBodyBytes?: number;
}

export interface OutboundAnswer {
  status: number;
  /** The first `maxBodyBytes` of the body, as UTF-8 text. */
  body: string;
  /** The answer's headers, names in lower case (repeated ones joined by `, `). */
  headers: Record<string, string>;
  durationMs: number;
}

export interface Outbound {
  check(url: string): Promise<URL>;
  /**
   * `fetch` through the guard, for a library that takes one (the MCP SDK's client): the same
   * check at connect time, no redirect followed unless the caller asks.
   */
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
  /** Calls `url`; rejects with OutboundRefused, a timeout or a network error. */
  request(url: string, init: OutboundRequest): Promise<OutboundAnswer>;
  close(): Promise<void>;
}

export function outbound(policy: OutboundPolicy): Outbound {
  const agent = new Agent({
    connect: {
      lookup: guardedLookup(policy),
      timeout: 10_000,
    },
    // a literal address skips lookup: it is checked below, before the request is made
    keepAliveTimeout: 4000,
    connections: 64,
  });
  /** A literal address skips the lookup: it is checked here, before any connection. */
  const checkLiteral = (target: URL) => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (!policy.allowPrivate && isIP(host)) {
      const range = forbiddenRange(host);
      if (range) throw new OutboundRefused(`${host} is a ${range} address`, 'private_network_url');
    }
  };
  return {
    check: (url) => checkOutboundUrl(url, policy),
    async fetch(url, init) {
      checkLiteral(new URL(url));
      const answer = await undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        redirect: init?.redirect ?? 'manual',
        dispatcher: agent,
      });
      // undici's Response is the one Node's fetch returns, from another copy of undici
      return answer as unknown as Response;
    },
    async request(url, init) {
      const started = performance.now();
      // A header undici refuses (CR, LF, NUL, a character beyond Latin-1) never settles that
      // request, and leaves the next ones to the same origin hanging: refuse it here, first.
      for (const [name, value] of Object.entries(init.headers)) {
        if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) {
          throw new TypeError(`the value of the header ${name} holds a character HTTP does not allow`);
        }
      }
      const target = new URL(url);
      checkLiteral(target);
      const timeoutMs = init.timeoutMs ?? 15_000;
      const limit = init.maxBodyBytes ?? 1024;
      const signal = AbortSignal.timeout(timeoutMs);
      const answer = await request(target, {
        method: init.method,
        headers: init.headers,
        body: init.body ?? null,
        dispatcher: agent,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      // read at most `limit` bytes, then drop the connection rather than drain a large answer
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of answer.body) {
          const buffer = chunk as Buffer;
          chunks.push(buffer.subarray(0, Math.max(0, limit - size)));
          size += buffer.length;
          if (size >= limit) break;
        }
      } finally {
        if (size >= limit) answer.body.destroy();
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined)
          headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      return {
        status: answer.statusCode,
        body: Buffer.concat(chunks).subarray(0, limit).toString('utf8'),
        headers,
        durationMs: Math.round(performance.now() - started),
      };
    },
    close: () => agent.close(),
  };
}
