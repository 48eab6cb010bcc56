// The limits each plan grants (docs/rate-limits.md: the directory's are the product's, the model API's ours).
import type { Bucket } from './limiter.ts';

/** Model API, per key and model: requests and tokens per minute by plan. */
export const MODEL_PLANS: Record<string, { rpm: number; tpm: number }> = {
  standard: { rpm: 600, tpm: 1_000_000 },
  enterprise: { rpm: 6_000, tpm: 10_000_000 },
};

/**
 * What replaces the plans' figures (src/config.ts reads them): `MODEL_RATE_LIMIT_RPM` and
 * `_TPM` every plan's requests and tokens per minute (lowered to exercise 429s, raised so a
 * fuzzer is not throttled), `MODEL_IMAGES_PER_MINUTE` and `MODEL_AUDIO_SECONDS_PER_MINUTE` the
 * media figures, `DIRECTORY_RATE_LIMIT_RPS` scales every directory figure from the
 * product's 60/s, `DIRECTORY_DAILY_QUOTA` the unlimited plan's 50,000 a day. Unset in production.
 */
export interface LimitSettings {
  modelRpm?: number | undefined;
  modelTpm?: number | undefined;
  /** MODEL_IMAGES_PER_MINUTE: every plan's images a minute per key. */
  imagesPerMinute?: number | undefined;
  /** MODEL_AUDIO_SECONDS_PER_MINUTE: every plan's seconds of audio (in and out) a minute per key. */
  audioSecondsPerMinute?: number | undefined;
  directoryRps?: number | undefined;
  directoryDailyQuota?: number | undefined;
}

export function modelRequestBucket(plan: string, limits: LimitSettings): Bucket {
  const rpm = limits.modelRpm ?? (MODEL_PLANS[plan] ?? (MODEL_PLANS.standard as { rpm: number })).rpm;
  return { name: 'requests', rate: rpm / 60, capacity: rpm, window: 60, quota: rpm };
}

export function modelTokenBucket(plan: string, limits: LimitSettings): Bucket {
  const tpm = limits.modelTpm ?? (MODEL_PLANS[plan] ?? (MODEL_PLANS.standard as { tpm: number })).tpm;
  return { name: 'tokens', rate: tpm / 60, capacity: tpm, window: 60, quota: tpm };
}

/** Model API media, per key: images and seconds of audio (in and out) a minute, by plan. */
export const MEDIA_PLANS: Record<string, { imagesPerMinute: number; audioSecondsPerMinute: number }> = {
  standard: { imagesPerMinute: 100, audioSecondsPerMinute: 3_600 },
  enterprise: { imagesPerMinute: 1_000, audioSecondsPerMinute: 36_000 },
};

/** The per-minute bucket of `images` or `audio_seconds` of a plan (or of its override). */
export function mediaBucket(
  plan: string,
  unit: 'images' | 'audio_seconds',
  settings: LimitSettings = {},
): Bucket {
  const limits = MEDIA_PLANS[plan] ?? (MEDIA_PLANS.standard as (typeof MEDIA_PLANS)[string]);
  const perMinute =
    unit === 'images'
      ? (settings.imagesPerMinute ?? limits.imagesPerMinute)
      : (settings.audioSecondsPerMinute ?? limits.audioSecondsPerMinute);
  return { name: unit, rate: perMinute / 60, capacity: perMinute, window: 60, quota: perMinute };
}

/**
 * Directory API, per key: 60 requests/s sustained with bursts up to 600/s for 30 s: a bucket
 * refilled at 60/s holding 16,200 (600/s for 30 s drains 18,000 while 1,800 flow back in),
 * under a ceiling of 600 in any second. The unlimited search plan adds 50,000 a day.
 */
export function directoryBuckets(
  plan: string,
  limits: LimitSettings,
  options: { search?: boolean } = {},
): Bucket[] {
  // tests lower the rate to reach a 429 in a few requests
  const rps = limits.directoryRps ?? 60;
  const buckets: Bucket[] = [
    { name: 'burst', rate: rps * 10, capacity: rps * 10, window: 1, quota: rps * 10 },
    { name: 'sustained', rate: rps, capacity: rps * 270, window: 270, quota: rps * 270 },
  ];
  if (plan === 'search_unlimited' && options.search !== false) {
    // The search plan's fair use ("about 50,000 requests per day on the unlimited plan"):
    // search requests only; places, sales and concierge are billed per call and not capped here.
    // A UTC day, counted, not refilled: the 50,001st search of a day waits for midnight UTC.
    const perDay = limits.directoryDailyQuota ?? 50_000;
    buckets.push({ name: 'day', kind: 'window', rate: 0, capacity: perDay, window: 86_400, quota: perDay });
  }
  return buckets;
}

/** Buckets that waiting a little cannot refill: a 429 from them says `x-should-retry: false`. */
export const QUOTA_BUCKETS = new Set(['day']);
