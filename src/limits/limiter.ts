// Token buckets, in memory by default and in Redis with REDIS_URL (one Lua script, so every
// instance takes from the same bucket atomically, on Redis's clock). A take either removes
// `cost` tokens from every bucket of the call or from none.
import { Redis } from 'ioredis';

export interface Bucket {
  /** The bucket's name within the key, as the RateLimit-Policy field names it. */
  name: string;
  /** Tokens added per second. */
  rate: number;
  /** Most tokens the bucket holds. */
  capacity: number;
  /** The policy's window in seconds, for RateLimit-Policy (`w`). */
  window: number;
  /** The policy's quota, for RateLimit-Policy (`q`). */
  quota: number;
}

export interface BucketState {
  bucket: Bucket;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export interface TakeResult {
  ok: boolean;
  /** When refused: how long until the cost fits, in ms. */
  retryAfterMs: number;
  states: BucketState[];
}

export interface Limiter {
  take(key: string, buckets: Bucket[], cost?: number): Promise<TakeResult>;
  close(): Promise<void>;
}

interface Level {
  tokens: number;
  at: number;
}

function refill(level: Level | undefined, bucket: Bucket, now: number): number {
  if (!level) return bucket.capacity;
  return Math.min(bucket.capacity, level.tokens + ((now - level.at) / 1000) * bucket.rate);
}

function summarize(buckets: Bucket[], levels: number[], cost: number): TakeResult {
  const ok = buckets.every((_, i) => (levels[i] ?? 0) >= cost);
  let retryAfterMs = 0;
  buckets.forEach((bucket, i) => {
    const level = levels[i] ?? 0;
    if (level < cost) retryAfterMs = Math.max(retryAfterMs, Math.ceil(((cost - level) / bucket.rate) * 1000));
  });
  const states = buckets.map((bucket, i) => {
    const after = Math.max(0, (levels[i] ?? 0) - (ok ? cost : 0));
    return {
      bucket,
      remaining: Math.floor(after),
      resetSeconds: Math.ceil((bucket.capacity - after) / bucket.rate),
    };
  });
  return { ok, retryAfterMs, states };
}

export function memoryLimiter(): Limiter {
  const levels = new Map<string, Level>();
  return {
    async take(key, buckets, cost = 1) {
      const now = Date.now();
      const current = buckets.map((b) => refill(levels.get(`${key}:${b.name}`), b, now));
      const result = summarize(buckets, current, cost);
      buckets.forEach((b, i) => {
        levels.set(`${key}:${b.name}`, { tokens: (current[i] ?? 0) - (result.ok ? cost : 0), at: now });
      });
      if (levels.size > 200_000) levels.clear();
      return result;
    },
    async close() {},
  };
}

// KEYS: one per bucket. ARGV: cost, then rate and capacity per bucket. Returns the levels
// before the take (as strings, to keep fractions), and 1 if taken.
const SCRIPT = `
local cost = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local levels = {}
local ok = 1
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i])
  local capacity = tonumber(ARGV[2 * i + 1])
  local state = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = capacity
  if state[1] then
    tokens = math.min(capacity, tonumber(state[1]) + (now - tonumber(state[2])) / 1000 * rate)
  end
  levels[i] = tokens
  if tokens < cost then ok = 0 end
end
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i])
  local capacity = tonumber(ARGV[2 * i + 1])
  local left = levels[i]
  if ok == 1 then left = left - cost end
  redis.call('HSET', key, 'tokens', tostring(left), 'at', tostring(now))
  redis.call('PEXPIRE', key, math.ceil(capacity / rate * 1000) + 1000)
  levels[i] = tostring(levels[i])
end
return {ok, levels}
`;

export async function redisLimiter(url: string): Promise<Limiter> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  return {
    async take(key, buckets, cost = 1) {
      const keys = buckets.map((b) => `rl:${key}:${b.name}`);
      const args = [String(cost), ...buckets.flatMap((b) => [String(b.rate), String(b.capacity)])];
      const [, levels] = (await redis.eval(SCRIPT, keys.length, ...keys, ...args)) as [number, string[]];
      return summarize(
        buckets,
        levels.map((l) => Number(l)),
        cost,
      );
    },
    async close() {
      await redis.quit();
    },
  };
}
