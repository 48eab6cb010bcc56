// The limits each plan grants (DESIGN.md; the seeds show the directory's, the model API's are ours).
import type { Bucket } from './limiter.ts';

/** Model API, per key and model: requests and tokens per minute by plan. */
export const MODEL_PLANS: Record<string, { rpm: number; tpm: number }> = {
  standard: { rpm: 600, tpm: 1_000_000 },
  enterprise: { rpm: 6_000, tpm: 10_000_000 },
};

/**
 * `MODEL_RATE_LIMIT_RPM` replaces every plan's requests per minute: lowered to exercise 429s,
 * raised so a fuzzer (schemathesis) is not throttled. Unset in production.
 */
export function rpmOverride(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.MODEL_RATE_LIMIT_RPM;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`MODEL_RATE_LIMIT_RPM must be a whole number of at least 1, not ${JSON.stringify(raw)}`);
  }
  return value;
}

export function modelRequestBucket(plan: string, env: NodeJS.ProcessEnv = process.env): Bucket {
  const rpm = rpmOverride(env) ?? (MODEL_PLANS[plan] ?? (MODEL_PLANS.standard as { rpm: number })).rpm;
  return { name: 'requests', rate: rpm / 60, capacity: rpm, window: 60, quota: rpm };
}

/** `MODEL_RATE_LIMIT_TPM` replaces every plan's tokens per minute, as MODEL_RATE_LIMIT_RPM does requests (benchmarks). */
export function tpmOverride(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.MODEL_RATE_LIMIT_TPM;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`MODEL_RATE_LIMIT_TPM must be a whole number of at least 1, not ${JSON.stringify(raw)}`);
  }
  return value;
}

export function modelTokenBucket(plan: string, env: NodeJS.ProcessEnv = process.env): Bucket {
  const tpm = tpmOverride(env) ?? (MODEL_PLANS[plan] ?? (MODEL_PLANS.standard as { tpm: number })).tpm;
  return { name: 'tokens', rate: tpm / 60, capacity: tpm, window: 60, quota: tpm };
}

/**
 * Directory API, per key: 60 requests/s sustained with bursts up to 600/s for 30 s: a bucket
 * refilled at 60/s holding 16,200 (600/s for 30 s drains 18,000 while 1,800 flow back in),
 * under a ceiling of 600 in any second. The unlimited search plan adds 50,000 a day.
 */
export function directoryBuckets(plan: string, env: NodeJS.ProcessEnv = process.env): Bucket[] {
  // DIRECTORY_RATE_LIMIT_RPS scales every figure from the seed's 60/s (tests lower it to reach a
  // 429 in a few requests); unset in production.
  const rps = Number(env.DIRECTORY_RATE_LIMIT_RPS || 60);
  if (!Number.isFinite(rps) || rps <= 0)
    throw new Error('DIRECTORY_RATE_LIMIT_RPS must be a positive number');
  const buckets: Bucket[] = [
    { name: 'burst', rate: rps * 10, capacity: rps * 10, window: 1, quota: rps * 10 },
    { name: 'sustained', rate: rps, capacity: rps * 270, window: 270, quota: rps * 270 },
  ];
  if (plan === 'search_unlimited') {
    buckets.push({ name: 'day', rate: 50_000 / 86_400, capacity: 50_000, window: 86_400, quota: 50_000 });
  }
  return buckets;
}

/** Buckets that waiting a little cannot refill: a 429 from them says `x-should-retry: false`. */
export const QUOTA_BUCKETS = new Set(['day']);
