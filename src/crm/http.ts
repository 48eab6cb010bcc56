// One call to a CRM, through the outbound guard, with the CRM's limits respected: a 429 is
// waited out (`Retry-After` in seconds or as a date, else the CRM's own rate headers), a 5xx
// or a network failure is retried with exponential backoff and jitter, and rejected
// credentials end the call at once with the CRM's own reason. Every wait is bounded, and so is
// the time one sync spends waiting on the CRM's limits.
import type { z } from 'zod';
import type { Outbound } from '../platform/outbound.ts';

export type CrmErrorCode =
  | 'crm_unauthorized'
  | 'crm_unavailable'
  | 'crm_rate_limited'
  | 'crm_timeout'
  /** The CRM lacks something we need that only its admin can add. */
  | 'crm_setup_required';

/** A call that failed as a whole (not one record of a batch). */
export class CrmError extends Error {
  readonly code: CrmErrorCode;
  readonly status: number | undefined;
  constructor(code: CrmErrorCode, message: string, status?: number) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

export interface CrmAnswer {
  status: number;
  body: unknown;
  text: string;
  headers: Record<string, string>;
}

export interface CrmHttpOptions {
  /** The CRM's name in messages. */
  vendor: string;
  baseUrl: string;
  headers: Record<string, string>;
  /** Reads the CRM's reason out of an error body. */
  reason: (body: unknown, text: string) => string;
  /** Whether an answer means the credentials were rejected (401, and some 403s). */
  unauthorized: (status: number, body: unknown) => boolean;
  /** One attempt's time limit; 30 s by default (10 s for the check call). */
  timeoutMs?: number;
  /** Retries of a 5xx or network failure; 4 by default. */
  retries?: number;
  /** The first backoff in ms, doubled each retry; 500 by default. */
  backoffMs?: number;
  /** The longest single wait for a rate limit, in ms; 120 s by default. */
  maxWaitMs?: number;
  /** No attempt, wait or retry past this time (epoch ms): the call is a `crm_timeout` then. */
  deadline?: number;
  /** Shared by every call of a sync: what it may still spend waiting on rate limits, in ms. */
  budget?: { waitMs: number };
  signal?: AbortSignal;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The largest body read from a CRM (a batch answer of 200 records is well under this). */
const MAX_BODY = 8 * 1024 * 1024;

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * How long a 429 asks us to wait, in ms: `Retry-After` (seconds or an HTTP date), else
 * `X-RateLimit-Reset` (Pipedrive: seconds until the window resets), else HubSpot's
 * `X-HubSpot-RateLimit-Interval-Milliseconds` (the window), else one second.
 */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number {
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const reset = Number(headers['x-ratelimit-reset']);
  if (headers['x-ratelimit-reset'] !== undefined && Number.isFinite(reset) && reset >= 0) {
    // seconds until reset; a value that looks like a Unix time is one
    return reset > 1e9 ? Math.max(0, reset * 1000 - now) : Math.ceil(reset * 1000);
  }
  const interval = Number(headers['x-hubspot-ratelimit-interval-milliseconds']);
  if (Number.isFinite(interval) && interval > 0) return interval;
  return 1000;
}

/** After a successful answer: how long to pause because the CRM says its window is spent. */
function pauseAfterMs(headers: Record<string, string>): number {
  const remaining =
    headers['x-ratelimit-remaining'] ?? headers['x-hubspot-ratelimit-secondly-remaining'] ?? undefined;
  if (remaining === undefined || Number(remaining) > 0) return 0;
  const reset = Number(headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0 && reset < 3600) return Math.ceil(reset * 1000);
  return 1000;
}

export class CrmHttp {
  readonly #outbound: Outbound;
  readonly #options: CrmHttpOptions;

  constructor(outbound: Outbound, options: CrmHttpOptions) {
    this.#outbound = outbound;
    this.#options = options;
  }

  get vendor(): string {
    return this.#options.vendor;
  }

  /**
   * Calls `path` on the CRM; answers any status below 500 but 401 and 429 (the caller reads
   * a 4xx as the CRM's verdict on the request or its records).
   */
  async call(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<CrmAnswer> {
    const o = this.#options;
    const sleep = o.sleep ?? defaultSleep;
    const retries = o.retries ?? 4;
    const maxWait = o.maxWaitMs ?? 120_000;
    let failures = 0;
    const late = () => new CrmError('crm_timeout', `${o.vendor} did not answer in time.`);
    const left = () => (o.deadline === undefined ? Infinity : o.deadline - Date.now());
    /** Sleeps `ms` unless that would pass the deadline. */
    const wait = async (ms: number) => {
      if (ms >= left()) throw late();
      await sleep(ms, o.signal);
    };
    for (;;) {
      o.signal?.throwIfAborted();
      if (left() <= 0) throw late();
      let answer: CrmAnswer;
      try {
        const raw = await this.#outbound.request(o.baseUrl.replace(/(?<!\/)\/+$/, '') + path, {
          method,
          headers: {
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...o.headers,
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          timeoutMs: Math.max(1, Math.min(o.timeoutMs ?? 30_000, left())),
          maxBodyBytes: MAX_BODY,
        });
        let parsed: unknown = null;
        try {
          parsed = raw.body ? JSON.parse(raw.body) : null;
        } catch {
          parsed = null;
        }
        answer = { status: raw.status, body: parsed, text: raw.body, headers: raw.headers };
      } catch (err) {
        o.signal?.throwIfAborted();
        const name = (err as { name?: string }).name;
        const timedOut = name === 'TimeoutError' || name === 'AbortError' || /timeout/i.test(String(err));
        if (failures++ < retries && !timedOut) {
          await wait(this.#backoff(failures));
          continue;
        }
        throw new CrmError(
          timedOut ? 'crm_timeout' : 'crm_unavailable',
          timedOut
            ? `${o.vendor} did not answer in time.`
            : `${o.vendor} could not be reached: ${(err as Error).message}`,
        );
      }
      if (o.unauthorized(answer.status, answer.body)) {
        throw new CrmError(
          'crm_unauthorized',
          `${o.vendor} rejected the credentials (${answer.status}): ${o.reason(answer.body, answer.text)}`,
          answer.status,
        );
      }
      if (answer.status === 429) {
        const ms = retryAfterMs(answer.headers);
        if (ms > maxWait || (o.budget && o.budget.waitMs < ms)) {
          throw new CrmError(
            'crm_rate_limited',
            `${o.vendor} is rate-limiting us for ${Math.ceil(ms / 1000)} s, longer than a sync waits: ${o.reason(answer.body, answer.text)}`,
            429,
          );
        }
        if (o.budget) o.budget.waitMs -= ms;
        await wait(ms);
        continue;
      }
      if (answer.status >= 500) {
        if (failures++ < retries) {
          await wait(this.#backoff(failures));
          continue;
        }
        throw new CrmError(
          'crm_unavailable',
          `${o.vendor} failed (${answer.status}): ${o.reason(answer.body, answer.text)}`,
          answer.status,
        );
      }
      const pause = pauseAfterMs(answer.headers);
      if (pause > 0 && pause <= maxWait && pause < left()) await sleep(pause, o.signal);
      return answer;
    }
  }

  #backoff(failures: number): number {
    const base = (this.#options.backoffMs ?? 500) * 2 ** (failures - 1);
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }
}

/** A short, single-line reason out of a CRM's error text. */
export function clip(text: string, max = 500): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * A CRM's answer read as its API reference gives it (`schema`: the parts we read, from the vendor
 * documents in contract-tests/vendor-specs): an answer of another shape (a base URL that is not
 * the CRM's, a proxy's page, a changed API) is a `crm_unavailable` naming what was wrong, never a
 * crash in the code that reads it.
 */
export function documented<T>(vendor: string, what: string, schema: z.ZodType<T>, answer: CrmAnswer): T {
  const read = schema.safeParse(answer.body);
  if (read.success) return read.data;
  const issue = read.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'the body';
  throw new CrmError(
    'crm_unavailable',
    `${vendor} answered ${what} (${answer.status}) in a shape its API reference does not give: ${where}: ${issue?.message ?? 'unexpected'}. Is the base URL the CRM's?`,
    answer.status,
  );
}
