// Rate limiting as middleware: after authentication (it needs the key), before the routers.
// Every limited response carries RateLimit-Policy and RateLimit; a refusal is a 429 with
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
      /** Those states as the two headers' values, made once for the reservations that add to them. */
      rateLimitHeaders?: { policy: string; limit: string };
    }
  }
}

function headerValues(states: BucketState[]): { policy: string; limit: string } {
  let policy = '';
  let limit = '';
  for (const s of states) {
    const sep = policy === '' ? '' : ', ';
    policy += `${sep}"${s.bucket.name}";q=${s.bucket.quota};w=${s.bucket.window}`;
    limit += `${sep}"${s.bucket.name}";r=${s.remaining};t=${s.resetSeconds}`;
  }
  return { policy, limit };
}

export function setRateLimitHeaders(res: Response, states: BucketState[]): void {
  const { policy, limit } = headerValues(states);
  res.setHeader('RateLimit-Policy', policy);
  res.setHeader('RateLimit', limit);
}

/** The request's buckets (the middleware's) and `added` in the headers, the former as made once. */
function addRateLimitHeaders(res: Response, added: BucketState[]): void {
  const request = res.locals.rateLimitHeaders;
  if (request === undefined || request.policy === '') return setRateLimitHeaders(res, added);
  if (added.length === 0) return setRateLimitHeaders(res, res.locals.rateLimitStates ?? []);
  const more = headerValues(added);
  res.setHeader('RateLimit-Policy', `${request.policy}, ${more.policy}`);
  res.setHeader('RateLimit', `${request.limit}, ${more.limit}`);
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
      res.setHeader('RateLimit-Policy', headers.policy);
      res.setHeader('RateLimit', headers.limit);
      res.locals.rateLimitStates = result.states;
      res.locals.rateLimitHeaders = headers;
      next(result.ok ? undefined : refusal(result, chosen.what));
    } catch (err) {
      next(err);
    }
  };
}
