// Token buckets and fixed windows, in memory by default and in Redis with REDIS_URL (one Lua
// script, so every instance takes from the same buckets atomically, on Redis's clock). A take
// either removes `cost` from every bucket of the call or from none.
import { Redis } from 'ioredis';

export interface Bucket {
  /** The bucket's name within the key, as the RateLimit-Policy field names it. */
  name: string;
  /**
   * `bucket` (the default): a token bucket refilled continuously at `rate`. `window`: a counter
   * of at most `capacity` per fixed window of `window` seconds aligned to the Unix epoch, so a
   * window of 86,400 s is a UTC day and everything comes back at midnight UTC, not before.
   */
  kind?: 'bucket' | 'window';
  /** Tokens added per second (token buckets only). */
  rate: number;
  /** Most tokens the bucket holds, or the most a window allows. */
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
  /** When refused: the buckets that can never hold the cost, however long the caller waits. */
  neverFits: Bucket[];
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

const isWindow = (bucket: Bucket) => bucket.kind === 'window';

/** Ms from `now` to the end of the fixed window `now` falls in. */
function windowLeftMs(bucket: Bucket, now: number): number {
  const size = bucket.window * 1000;
  return (Math.floor(now / size) + 1) * size - now;
}

function refill(level: Level | undefined, bucket: Bucket, now: number): number {
  if (!level) return bucket.capacity;
  if (isWindow(bucket)) {
    const size = bucket.window * 1000;
    return Math.floor(level.at / size) === Math.floor(now / size) ? level.tokens : bucket.capacity;
  }
  return Math.min(bucket.capacity, level.tokens + ((now - level.at) / 1000) * bucket.rate);
}

function summarize(buckets: Bucket[], levels: number[], cost: number, now: number): TakeResult {
  const ok = buckets.every((_, i) => (levels[i] ?? 0) >= cost);
  let retryAfterMs = 0;
  const neverFits = ok ? [] : buckets.filter((b) => b.capacity < cost);
  buckets.forEach((bucket, i) => {
    const level = levels[i] ?? 0;
    if (level >= cost) return;
    const wait =
      bucket.capacity < cost
        ? bucket.window * 1000
        : isWindow(bucket)
          ? windowLeftMs(bucket, now)
          : Math.ceil(((cost - level) / bucket.rate) * 1000);
    retryAfterMs = Math.max(retryAfterMs, wait);
  });
  const states = buckets.map((bucket, i) => {
    const after = Math.max(0, (levels[i] ?? 0) - (ok ? cost : 0));
    const resetSeconds = isWindow(bucket)
      ? after >= bucket.capacity
        ? 0
        : Math.ceil(windowLeftMs(bucket, now) / 1000)
      : Math.ceil((bucket.capacity - after) / bucket.rate);
    return { bucket, remaining: Math.floor(after), resetSeconds };
  });
  return { ok, retryAfterMs, neverFits, states };
}

export function memoryLimiter(clock: () => number = Date.now): Limiter {
  const levels = new Map<string, Level>();
  return {
    async take(key, buckets, cost = 1) {
      const now = clock();
      const current = buckets.map((b) => refill(levels.get(`${key}:${b.name}`), b, now));
      const result = summarize(buckets, current, cost, now);
      buckets.forEach((b, i) => {
        levels.set(`${key}:${b.name}`, { tokens: (current[i] ?? 0) - (result.ok ? cost : 0), at: now });
      });
      if (levels.size > 200_000) levels.clear();
      return result;
    },
    async close() {},
  };
}

// KEYS: one per bucket. ARGV: cost, then rate, capacity and window (0 for a token bucket) per
// bucket. Returns 1 if taken, the levels before the take (as strings, to keep fractions), and
// Redis's clock in ms.
const SCRIPT = `
local cost = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local levels = {}
local ok = 1
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[3 * i - 1])
  local capacity = tonumber(ARGV[3 * i])
  local window = tonumber(ARGV[3 * i + 1])
  local state = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = capacity
  if state[1] then
    if window > 0 then
      if math.floor(tonumber(state[2]) / window) == math.floor(now / window) then tokens = tonumber(state[1]) end
    else
      tokens = math.min(capacity, tonumber(state[1]) + (now - tonumber(state[2])) / 1000 * rate)
    end
  end
  levels[i] = tokens
  if tokens < cost then ok = 0 end
end
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[3 * i - 1])
  local capacity = tonumber(ARGV[3 * i])
  local window = tonumber(ARGV[3 * i + 1])
  local left = levels[i]
  if ok == 1 then left = left - cost end
  redis.call('HSET', key, 'tokens', tostring(left), 'at', tostring(now))
  if window > 0 then
    redis.call('PEXPIRE', key, window - now % window + 1000)
  else
    redis.call('PEXPIRE', key, math.ceil(capacity / rate * 1000) + 1000)
  end
  levels[i] = tostring(levels[i])
end
return {ok, levels, tostring(now)}
`;

export async function redisLimiter(url: string): Promise<Limiter> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  return {
    async take(key, buckets, cost = 1) {
      const keys = buckets.map((b) => `rl:${key}:${b.name}`);
      const args = [
        String(cost),
        ...buckets.flatMap((b) => [
          String(b.rate),
          String(b.capacity),
          String(isWindow(b) ? b.window * 1000 : 0),
        ]),
      ];
      const [, levels, now] = (await redis.eval(SCRIPT, keys.length, ...keys, ...args)) as [
        number,
        string[],
        string,
      ];
      return summarize(
        buckets,
        levels.map((l) => Number(l)),
        cost,
        Number(now),
      );
    },
    async close() {
      await redis.quit();
    },
  };
}
