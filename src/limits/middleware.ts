// Rate limiting as middleware: after authentication (it needs the key), before the routers.
// Every limited response carries RateLimit-Policy and RateLimit, and the same numbers under
// OpenAI's names (x-ratelimit-limit-requests, x-ratelimit-remaining-tokens, x-ratelimit-reset-...)
// that clients and routers written against OpenAI read; a refusal is a 429 with
// Retry-After and retry-after-ms, and x-should-retry: false when waiting cannot help.
import type { NextFunction, Request, Response } from 'express';
import { RateLimitError } from '../platform/errors.ts';
import type { Principal } from '../platform/principal.ts';
import type { Bucket, BucketState, Limiter, TakeResult } from './limiter.ts';
import { type LimitSettings, mediaBucket, modelTokenBucket, QUOTA_BUCKETS } from './policies.ts';

declare global {
  namespace Express {
    interface Locals {
      /** The request's buckets as the rate limit left them (a token reservation adds its own). */
      rateLimitStates?: BucketState[];
      /** Those states as the headers' values, made once for the reservations that add to them. */
      rateLimitHeaders?: RateLimitHeaders;
    }
  }
}

interface RateLimitHeaders {
  policy: string;
  limit: string;
  /** OpenAI's names for the same numbers: `x-ratelimit-limit-requests`, `-remaining-`, `-reset-`. */
  openai: [string, string][];
}

/** Seconds as OpenAI writes a reset: `1s`, `6m0s`, `1h0m0s`. */
export function resetText(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m${s % 60}s`;
}

function headerValues(states: BucketState[]): RateLimitHeaders {
  let policy = '';
  let limit = '';
  const openai: [string, string][] = [];
  for (const s of states) {
    const sep = policy === '' ? '' : ', ';
    policy += `${sep}"${s.bucket.name}";q=${s.bucket.quota};w=${s.bucket.window}`;
    limit += `${sep}"${s.bucket.name}";r=${s.remaining};t=${s.resetSeconds}`;
    openai.push(
      [`x-ratelimit-limit-${s.bucket.name}`, String(s.bucket.quota)],
      [`x-ratelimit-remaining-${s.bucket.name}`, String(s.remaining)],
      [`x-ratelimit-reset-${s.bucket.name}`, resetText(s.resetSeconds)],
    );
  }
  return { policy, limit, openai };
}

function writeHeaders(res: Response, headers: RateLimitHeaders): void {
  res.setHeader('RateLimit-Policy', headers.policy);
  res.setHeader('RateLimit', headers.limit);
  for (const [name, value] of headers.openai) res.setHeader(name, value);
}

export function setRateLimitHeaders(res: Response, states: BucketState[]): void {
  writeHeaders(res, headerValues(states));
}

/** The request's buckets (the middleware's) and `added` in the headers, the former as made once. */
function addRateLimitHeaders(res: Response, added: BucketState[]): void {
  const request = res.locals.rateLimitHeaders;
  if (request === undefined || request.policy === '') return setRateLimitHeaders(res, added);
  if (added.length === 0) return setRateLimitHeaders(res, res.locals.rateLimitStates ?? []);
  const more = headerValues(added);
  writeHeaders(res, {
    policy: `${request.policy}, ${more.policy}`,
    limit: `${request.limit}, ${more.limit}`,
    openai: [...request.openai, ...more.openai],
  });
}

export function refusal(result: TakeResult, what: string): RateLimitError {
  const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
  // A quota refusal only when the quota itself is spent: on the unlimited plan a key over its
  // burst with most of its day left is an ordinary, retryable 429.
  const quota = result.states.find((s) => QUOTA_BUCKETS.has(s.bucket.name) && s.remaining <= 0);
  const headers: Record<string, string> = {
    'Retry-After': String(seconds),
    'retry-after-ms': String(result.retryAfterMs),
  };
  const never = result.neverFits[0];
  if (never) {
    headers['x-should-retry'] = 'false';
    return new RateLimitError(
      'rate_limit_exceeded',
      `This request needs more than the ${never.quota} ${never.name} per ${never.window} s allowed for ${what}; waiting cannot make it fit, a smaller request can.`,
      { headers },
    );
  }
  if (quota) {
    headers['x-should-retry'] = 'false';
    return new RateLimitError(
      'daily_quota_exceeded',
      `The daily quota of ${quota.bucket.quota} requests is spent; it refills within ${seconds} s.`,
      { headers },
    );
  }
  return new RateLimitError('rate_limit_exceeded', `Rate limit reached for ${what}; retry in ${seconds} s.`, {
    headers,
  });
}

/**
 * Reserves `tokens` of the key's tokens per minute for `model` (chat and embeddings share the
 * budget), adds the tokens bucket to the request's RateLimit headers, and throws the 429 when
 * the reservation does not fit.
 */
export async function takeModelTokens(
  limiter: Limiter,
  res: Response,
  principal: Principal,
  model: string,
  tokens: number,
  limits: LimitSettings,
): Promise<void> {
  const taken = await limiter.take(
    `model:${principal.keyId}:${model}:tokens`,
    [modelTokenBucket(principal, limits)],
    tokens,
  );
  addRateLimitHeaders(res, taken.states);
  if (!taken.ok) throw refusal(taken, `tokens of model '${model}'`);
}

/**
 * Takes `amount` of the key's images or audio seconds a minute for `model`, adds that bucket to
 * the request's RateLimit headers (when they are not sent yet), and throws the 429 when it does
 * not fit. Audio seconds are taken when known (a transcription's input after decoding, speech's
 * output as it is made), so `amount` may be a part.
 */
export async function takeMediaUnits(
  limiter: Limiter,
  limits: LimitSettings,
  /** The HTTP answer whose RateLimit headers get the bucket; undefined on a WebSocket. */
  res: Response | undefined,
  principal: Principal,
  model: string,
  unit: 'images' | 'audio_seconds',
  amount: number,
): Promise<void> {
  const taken = await limiter.take(
    `model:${principal.keyId}:${model}:${unit}`,
    [mediaBucket(principal, unit, limits)],
    amount,
  );
  if (res !== undefined && !res.headersSent) addRateLimitHeaders(res, taken.states);
  if (!taken.ok)
    throw refusal(taken, `${unit === 'images' ? 'images' : 'seconds of audio'} of model '${model}'`);
}

export interface LimitPlan {
  key: string;
  buckets: Bucket[];
  /** Named in the 429 message, e.g. "model 'queen'". */
  what: string;
}

export function rateLimit(
  limiter: Limiter,
  plan: (req: Request, principal: Principal) => LimitPlan | undefined,
) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const principal = res.locals.principal;
    if (!principal) return next();
    const chosen = plan(req, principal);
    if (!chosen) return next();
    try {
      const result = await limiter.take(chosen.key, chosen.buckets);
      const headers = headerValues(result.states);
      writeHeaders(res, headers);
      res.locals.rateLimitStates = result.states;
      res.locals.rateLimitHeaders = headers;
      next(result.ok ? undefined : refusal(result, chosen.what));
    } catch (err) {
      next(err);
    }
  };
}
