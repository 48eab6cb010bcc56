import { describe, expect, it } from 'vitest';
import { type Bucket, memoryLimiter } from './limiter.ts';
import { refusal } from './middleware.ts';
import { directoryBuckets } from './policies.ts';

const DAY = Date.UTC(2026, 10, 21);

describe('memory limiter', () => {
  it('counts a daily quota per UTC day: spent at 23:00, still spent at 23:59:59, back at midnight', async () => {
    let now = DAY + 23 * 3600_000;
    const limiter = memoryLimiter(() => now);
    const day: Bucket = { name: 'day', kind: 'window', rate: 0, capacity: 3, window: 86_400, quota: 3 };
    for (let i = 0; i < 3; i++) expect((await limiter.take('k', [day])).ok).toBe(true);
    const refused = await limiter.take('k', [day]);
    expect(refused.ok).toBe(false);
    expect(refused.retryAfterMs).toBe(3600_000);
    now = DAY + 86_400_000 - 1000;
    expect((await limiter.take('k', [day])).ok).toBe(false);
    now = DAY + 86_400_000;
    const next = await limiter.take('k', [day]);
    expect(next.ok).toBe(true);
    expect(next.states[0]?.remaining).toBe(2);
  });

  it('answers a directory key over its daily quota with daily_quota_exceeded and x-should-retry: false', async () => {
    const now = DAY + 12 * 3600_000;
    const limiter = memoryLimiter(() => now);
    const buckets = directoryBuckets({ plan: 'search_unlimited' }, { directoryDailyQuota: 2 });
    await limiter.take('k', buckets);
    await limiter.take('k', buckets);
    const refused = await limiter.take('k', buckets);
    const error = refusal(refused, 'this key');
    expect(error.code).toBe('daily_quota_exceeded');
    expect(error.headers['x-should-retry']).toBe('false');
    expect(error.headers['Retry-After']).toBe(String(12 * 3600));
  });

  it('answers an unlimited-plan key over its burst, with its day left, with a retryable rate_limit_exceeded', async () => {
    const limiter = memoryLimiter(() => DAY);
    const buckets = directoryBuckets({ plan: 'search_unlimited' }, { directoryRps: 0.1 });
    expect((await limiter.take('k', buckets)).ok).toBe(true);
    const refused = await limiter.take('k', buckets);
    expect(refused.ok).toBe(false);
    const error = refusal(refused, 'this key');
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.headers['x-should-retry']).toBeUndefined();
  });

  it('says waiting cannot help when a cost exceeds what the bucket can ever hold', async () => {
    const limiter = memoryLimiter(() => DAY);
    const tokens: Bucket = { name: 'tokens', rate: 10, capacity: 600, window: 60, quota: 600 };
    const result = await limiter.take('k', [tokens], 601);
    expect(result.ok).toBe(false);
    expect(result.neverFits).toEqual([tokens]);
    expect(refusal(result, "model 'queen'").headers['x-should-retry']).toBe('false');
    // One that fits after a wait is an ordinary, retryable 429.
    await limiter.take('k2', [tokens], 500);
    const later = await limiter.take('k2', [tokens], 200);
    expect(later.ok).toBe(false);
    expect(later.retryAfterMs).toBe(10_000);
    expect(refusal(later, "model 'queen'").headers['x-should-retry']).toBeUndefined();
  });
});
