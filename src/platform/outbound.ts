// The one door out: every HTTP call the product makes to an address someone gave goes through
// here. Addresses a customer gave (webhook endpoints, remote MCP servers, CRM base URLs) are
// checked by `checkOutboundUrl` when saved and called by `request` or `fetch`: loopback, private,
// link-local, multicast, reserved and unspecified addresses are refused (IPv4 and IPv6, and the
// IPv4 address an IPv6 one embeds: mapped, compatible, NAT64). The upstream engines the operator configured (MODEL_ENGINES) are called
// by `open`, with origin `operator`: private networks are allowed there (a vLLM on 10.0.0.5 is
// normal on premises), link-local (the cloud metadata service at 169.254.169.254), multicast,
// broadcast, reserved and unspecified addresses still are not. Either way the check is made again
// on the address the connection actually uses, inside the socket's own lookup, so a name that
// resolved to an allowed address at create time and to a refused one now (DNS rebinding) is
// refused. OUTBOUND_ALLOW_PRIVATE=true lifts all of it (tests, on-premises installs). Answers are
// bounded: timeouts, no redirects followed, and at most `maxBodyBytes` of the body read.
import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
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

/** A call that took longer than one of its bounds. */
export class OutboundTimeout extends Error {
  readonly phase: 'connect' | 'first_byte' | 'total';
  readonly ms: number;
  constructor(phase: OutboundTimeout['phase'], ms: number) {
    super(
      phase === 'connect'
        ? `no connection within ${ms} ms`
        : phase === 'first_byte'
          ? `no answer within ${ms} ms`
          : `the answer did not finish within ${ms} ms`,
    );
    this.phase = phase;
    this.ms = ms;
  }
}

/** An answer longer than the call's `maxBodyBytes`: the connection is dropped there. */
export class OutboundTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`the answer is longer than ${limit} bytes`);
    this.limit = limit;
  }
}

/**
 * Who gave the address. `customer` (webhooks, MCP servers, CRMs): public addresses only.
 * `operator` (MODEL_ENGINES upstreams): private networks too, as on-premises installs need.
 */
export type OutboundOrigin = 'customer' | 'operator';

/** The ranges an operator's upstream may use besides the public internet: its own networks. */
const OPERATOR_RANGES = new Set(['private', 'loopback', 'uniqueLocal', 'carrierGradeNat']);

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

/**
 * The IPv4 address an IPv6 one carries to an IPv4 host, judged as that IPv4 address:
 * IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d` (deprecated by RFC 4291, but
 * ipaddr.js calls it `unicast`, and a URL stores `[::127.0.0.1]` as `[::7f00:1]`), and the NAT64
 * well-known prefix `64:ff9b::/96` (RFC 6052: a NAT64 gateway reaches a.b.c.d for it). 6to4
 * (`2002::/16`), Teredo and the local-use NAT64 prefix `64:ff9b:1::/48` stay refused whole as
 * their own ranges: no customer endpoint needs those transition relays.
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = v6.parts;
  const low = () => new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
  const zeroTo = (end: number, from = 0) => p.slice(from, end).every((part) => part === 0);
  if (zeroTo(5) && p[5] === 0xffff) return low();
  // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4 ones
  if (zeroTo(6) && (p[6] !== 0 || p[7]! > 1)) return low();
  if (p[0] === 0x64 && p[1] === 0xff9b && zeroTo(6, 2)) return low();
  return undefined;
}

/** Why this address may not be called by a call of `origin`, or undefined when it may. */
export function forbiddenRange(address: string, origin: OutboundOrigin = 'customer'): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  const range = (parsed.kind() === 'ipv6' ? (embeddedIPv4(parsed as ipaddr.IPv6) ?? parsed) : parsed).range();
  // 'unicast' is the public internet in both families; everything else is somebody's own network,
  // this machine, or no single machine at all. The operator's own networks are theirs to use.
  if (range === 'unicast' || (origin === 'operator' && OPERATOR_RANGES.has(range))) return undefined;
  return range;
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

/** A lookup that hands the socket only allowed addresses (the check at connect time). */
function guardedLookup(policy: OutboundPolicy, origin: OutboundOrigin = 'customer'): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, policy).then(
      (list) => {
        const allowed = policy.allowPrivate ? list : list.filter((a) => !forbiddenRange(a.address, origin));
        if (allowed.length === 0) {
          const first = list[0]?.address ?? hostname;
          const refused = new OutboundRefused(
            `${hostname} resolves to ${first}, a ${forbiddenRange(first, origin) ?? 'forbidden'} address`,
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

/** One streamed call (`open`): an upstream engine's request, its answer read as it arrives. */
export interface OutboundOpen {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Who gave the address; `operator` for MODEL_ENGINES upstreams. */
  origin: OutboundOrigin;
  /** Time to open the TCP (and TLS) connection. */
  connectTimeoutMs: number;
  /** Time from sending to the caller's `firstByte()` (the caller says what counts: an SSE event). */
  firstByteTimeoutMs: number;
  /** Time for the whole exchange. */
  totalTimeoutMs: number;
  /** The most of the answer's body read; past it the call fails with OutboundTooLarge. */
  maxBodyBytes: number;
  /** The caller's abort (a client that left). */
  signal?: AbortSignal | undefined;
}

export interface OutboundCall {
  url: URL;
  /** The answer's status and headers. */
  response: Promise<{ status: number; headers: http.IncomingHttpHeaders }>;
  /** The answer's body as it arrives, at most `maxBodyBytes`. */
  body(): AsyncIterable<Buffer>;
  /** Disarms the first-byte timeout. */
  firstByte(): void;
  /**
   * What ended the call, for the caller's error: the timeout, the cap, the refusal or the abort
   * that caused `error` (which may be a socket's "aborted"), else `error` itself.
   */
  cause(error: unknown): unknown;
  /** Disarms the timers and frees the connection (a call not read to its end is dropped). */
  close(): void;
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
  /**
   * Opens one streamed call (an upstream engine's): the request is sent at once; `response`
   * resolves with the answer's head, `body()` reads it. Never follows a redirect (a 3xx is an
   * answer like any other). Errors: OutboundRefused, OutboundTimeout, OutboundTooLarge, the
   * caller's abort reason, or the network's.
   */
  open(url: URL, init: OutboundOpen): OutboundCall;
  /**
   * The address a connection of `origin` to `host` may use now, by the same lookup and ranges as
   * the calls above: for a protocol other than HTTP (the mail relay's SMTP). Rejects with
   * OutboundRefused when every address is forbidden.
   */
  address(host: string, origin: OutboundOrigin): Promise<LookupAddress>;
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
  // node:http for streamed calls: its socket events tell the connect from the wait for an answer
  // (per-call connect timeouts), and it never follows a redirect. One keep-alive pool per origin,
  // each with its origin's lookup.
  const pools = {
    customer: {
      http: new http.Agent({ keepAlive: true, lookup: guardedLookup(policy, 'customer') }),
      https: new https.Agent({ keepAlive: true, lookup: guardedLookup(policy, 'customer') }),
    },
    operator: {
      http: new http.Agent({ keepAlive: true, lookup: guardedLookup(policy, 'operator') }),
      https: new https.Agent({ keepAlive: true, lookup: guardedLookup(policy, 'operator') }),
    },
  };
  /** A literal address skips the lookup: it is checked here, before any connection. */
  const checkLiteral = (target: URL, origin: OutboundOrigin = 'customer') => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (!policy.allowPrivate && isIP(host)) {
      const range = forbiddenRange(host, origin);
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
    open: (url, init) => openCall(url, init, pools[init.origin], checkLiteral),
    address: (host, origin) =>
      new Promise((resolve, reject) => {
        const bare = host.replace(/^\[|\]$/g, '');
        if (isIP(bare)) {
          try {
            checkLiteral(
              new URL(`http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}`),
              origin,
            );
          } catch (err) {
            return reject(err as Error);
          }
          return resolve({ address: bare, family: isIP(bare) });
        }
        guardedLookup(policy, origin)(bare, {}, (err, address, family) =>
          err ? reject(err) : resolve({ address: address as string, family: family ?? 4 }),
        );
      }),
    close: async () => {
      for (const pool of Object.values(pools)) {
        pool.http.destroy();
        pool.https.destroy();
      }
      await agent.close();
    },
  };
}

function openCall(
  url: URL,
  init: OutboundOpen,
  pool: { http: http.Agent; https: https.Agent },
  checkLiteral: (target: URL, origin: OutboundOrigin) => void,
): OutboundCall {
  const secure = url.protocol === 'https:';
  const signal = init.signal;
  let failure: unknown;
  let res: http.IncomingMessage | undefined;
  let req: http.ClientRequest | undefined;
  const timers: NodeJS.Timeout[] = [];
  let firstByteTimer: NodeJS.Timeout | undefined;
  const fail = (error: unknown): void => {
    failure ??= error;
    res?.destroy(error as Error);
    req?.destroy(error as Error);
  };
  const onAbort = (): void => fail(signal?.reason ?? new DOMException('Aborted', 'AbortError'));
  const close = (): void => {
    for (const timer of timers) clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    if (res !== undefined && !res.complete) res.destroy();
    if (req !== undefined && !req.destroyed && res === undefined) req.destroy();
  };
  const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    try {
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new OutboundRefused(`${url.protocol} is not http or https`, 'insecure_url');
      checkLiteral(url, init.origin);
    } catch (error) {
      failure = error;
      reject(error as Error);
      return;
    }
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    req = (secure ? https : http).request(url, {
      method: init.method,
      headers,
      agent: secure ? pool.https : pool.http,
    });
    const connect = setTimeout(
      () => fail(new OutboundTimeout('connect', init.connectTimeoutMs)),
      init.connectTimeoutMs,
    );
    firstByteTimer = setTimeout(
      () => fail(new OutboundTimeout('first_byte', init.firstByteTimeoutMs)),
      init.firstByteTimeoutMs,
    );
    timers.push(
      connect,
      firstByteTimer,
      setTimeout(() => fail(new OutboundTimeout('total', init.totalTimeoutMs)), init.totalTimeoutMs),
    );
    req.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connect);
      else socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connect));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted === true) onAbort();
    req.once('response', (answer) => {
      res = answer;
      req!.on('error', () => {}); // later errors surface through the body
      resolve({ status: answer.statusCode ?? 0, headers: answer.headers });
    });
    req.once('error', (error) => reject((failure as Error | undefined) ?? error));
    req.end(init.body);
  });
  response.catch(() => {});
  return {
    url,
    response,
    async *body() {
      await response;
      let size = 0;
      try {
        // not destroyed when the iteration ends: a Readable's iterator destroys its stream even
        // after its end, and an answer's destroy aborts its request, which closed the connection
        // instead of returning it to the pool (a new TCP connection every call); `close` destroys
        // an answer that was not read to its end
        for await (const chunk of res!.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > init.maxBodyBytes) {
            fail(new OutboundTooLarge(init.maxBodyBytes));
            throw failure;
          }
          yield chunk;
        }
      } catch (error) {
        throw failure ?? error;
      }
    },
    firstByte: () => clearTimeout(firstByteTimer),
    cause: (error) => (signal?.aborted === true ? (signal.reason ?? error) : (failure ?? error)),
    close,
  };
}
