// The limits each plan grants (docs/rate-limits.md: the directory's are the product's, the model
// API's ours), and an account's custom limits (an enterprise contract), which replace its plan's
// figure by figure. Precedence: the account's custom figure, then the test settings of the
// environment, then the plan.
import type { CustomLimits } from '../platform/principal.ts';
import type { Bucket } from './limiter.ts';

/** Whose limits: an account's plan and its custom limits (a Principal is one). */
export interface LimitsOf {
  plan: string;
  limits?: CustomLimits | undefined;
}

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

const modelPlan = (plan: string) =>
  MODEL_PLANS[plan] ?? (MODEL_PLANS.standard as { rpm: number; tpm: number });

export function modelRequestBucket(who: LimitsOf, limits: LimitSettings): Bucket {
  const rpm = who.limits?.modelRpm ?? limits.modelRpm ?? modelPlan(who.plan).rpm;
  return { name: 'requests', rate: rpm / 60, capacity: rpm, window: 60, quota: rpm };
}

export function modelTokenBucket(who: LimitsOf, limits: LimitSettings): Bucket {
  const tpm = who.limits?.modelTpm ?? limits.modelTpm ?? modelPlan(who.plan).tpm;
  return { name: 'tokens', rate: tpm / 60, capacity: tpm, window: 60, quota: tpm };
}

/** Model API media, per key: images and seconds of audio (in and out) a minute, by plan. */
export const MEDIA_PLANS: Record<string, { imagesPerMinute: number; audioSecondsPerMinute: number }> = {
  standard: { imagesPerMinute: 100, audioSecondsPerMinute: 3_600 },
  enterprise: { imagesPerMinute: 1_000, audioSecondsPerMinute: 36_000 },
};

/** The per-minute bucket of `images` or `audio_seconds` of a plan (or of its override). */
export function mediaBucket(
  who: LimitsOf,
  unit: 'images' | 'audio_seconds',
  settings: LimitSettings = {},
): Bucket {
  const limits = MEDIA_PLANS[who.plan] ?? (MEDIA_PLANS.standard as (typeof MEDIA_PLANS)[string]);
  const perMinute =
    unit === 'images'
      ? (who.limits?.imagesPerMinute ?? settings.imagesPerMinute ?? limits.imagesPerMinute)
      : (who.limits?.audioSecondsPerMinute ?? settings.audioSecondsPerMinute ?? limits.audioSecondsPerMinute);
  return { name: unit, rate: perMinute / 60, capacity: perMinute, window: 60, quota: perMinute };
}

/** The directory's figures for `who`: sustained rate, burst ceiling and length, daily search quota. */
export function directoryFigures(
  who: LimitsOf,
  limits: LimitSettings,
): { rps: number; burst: number; burstSeconds: number; dailyQuota: number | null } {
  const custom = who.limits;
  // tests lower the rate to reach a 429 in a few requests
  const rps = custom?.directoryRps ?? limits.directoryRps ?? 60;
  const planQuota = who.plan === 'search_unlimited' ? (limits.directoryDailyQuota ?? 50_000) : null;
  return {
    rps,
    burst: custom?.directoryBurst ?? rps * 10,
    burstSeconds: custom?.directoryBurstSeconds ?? 30,
    dailyQuota: custom?.directoryDailyQuota === undefined ? planQuota : custom.directoryDailyQuota,
  };
}

/**
 * Directory API, per key: 60 requests/s sustained with bursts up to 600/s for 30 s: a bucket
 * refilled at 60/s holding 16,200 (600/s for 30 s drains 18,000 while 1,800 flow back in),
 * under a ceiling of 600 in any second. The unlimited search plan adds 50,000 searches a day.
 * An account's custom limits set each figure.
 */
export function directoryBuckets(
  who: LimitsOf,
  limits: LimitSettings,
  options: { search?: boolean } = {},
): Bucket[] {
  const { rps, burst, burstSeconds, dailyQuota } = directoryFigures(who, limits);
  // what a burst of `burstSeconds` at the ceiling drains beyond the refill (one second's worth at least)
  const held = Math.max(rps, (burst - rps) * burstSeconds);
  const buckets: Bucket[] = [
    { name: 'burst', rate: burst, capacity: burst, window: 1, quota: burst },
    { name: 'sustained', rate: rps, capacity: held, window: Math.ceil(held / rps), quota: held },
  ];
  if (dailyQuota !== null && options.search !== false) {
    // The search plan's fair use ("about 50,000 requests per day on the unlimited plan"):
    // search requests only; places, sales and concierge are billed per call and not capped here.
    // A UTC day, counted, not refilled: the 50,001st search of a day waits for midnight UTC.
    buckets.push({
      name: 'day',
      kind: 'window',
      rate: 0,
      capacity: dailyQuota,
      window: 86_400,
      quota: dailyQuota,
    });
  }
  return buckets;
}

/** Buckets that waiting a little cannot refill: a 429 from them says `x-should-retry: false`. */
export const QUOTA_BUCKETS = new Set(['day']);
