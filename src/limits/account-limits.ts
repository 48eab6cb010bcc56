// An account's custom limits (an enterprise contract), set by the operator: kept in
// account_limits, read with the key at authentication (src/accounts/auth.ts caches them with the
// key and drops them on every instance when they change), and what the account's keys are
// allowed on both APIs with them.
import type { AccountLimits } from '../../generated/model/client/types.gen.ts';
import type { Queryable } from '../platform/db.ts';
import type { CustomLimits } from '../platform/principal.ts';
import {
  directoryFigures,
  type LimitSettings,
  type LimitsOf,
  mediaBucket,
  modelRequestBucket,
  modelTokenBucket,
} from './policies.ts';

interface Row {
  model_rpm: number | null;
  model_tpm: number | null;
  images_per_minute: number | null;
  audio_seconds_per_minute: number | null;
  directory_rps: number | null;
  directory_burst: number | null;
  directory_burst_seconds: number | null;
  directory_daily_quota: number | null;
  directory_daily_quota_set: boolean;
  updated: number;
}

const given = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

function customOf(row: Row): CustomLimits | undefined {
  const limits: CustomLimits = {
    modelRpm: given(row.model_rpm),
    modelTpm: given(row.model_tpm === null ? null : Number(row.model_tpm)),
    imagesPerMinute: given(row.images_per_minute),
    audioSecondsPerMinute: given(row.audio_seconds_per_minute),
    directoryRps: given(row.directory_rps),
    directoryBurst: given(row.directory_burst),
    directoryBurstSeconds: given(row.directory_burst_seconds),
    directoryDailyQuota: row.directory_daily_quota_set
      ? row.directory_daily_quota === null
        ? null
        : Number(row.directory_daily_quota)
      : undefined,
  };
  return Object.values(limits).some((v) => v !== undefined) ? limits : undefined;
}

export class AccountLimitsStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  /** The account's custom limits (undefined when none), and when they were last changed. */
  async get(accountId: string): Promise<{ limits: CustomLimits | undefined; updated: number | null }> {
    const [row] = await this.#db.query<Row>('select * from account_limits where account_id = $1', [
      accountId,
    ]);
    return row
      ? { limits: customOf(row), updated: Number(row.updated) }
      : { limits: undefined, updated: null };
  }

  /** Replaces the account's custom limits (figures left out are the plan's). */
  async set(accountId: string, limits: CustomLimits, now = Math.floor(Date.now() / 1000)): Promise<void> {
    await this.#db.query(
      `insert into account_limits (account_id, model_rpm, model_tpm, images_per_minute, audio_seconds_per_minute,
         directory_rps, directory_burst, directory_burst_seconds, directory_daily_quota, directory_daily_quota_set, updated)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       on conflict (account_id) do update set model_rpm = $2, model_tpm = $3, images_per_minute = $4,
         audio_seconds_per_minute = $5, directory_rps = $6, directory_burst = $7, directory_burst_seconds = $8,
         directory_daily_quota = $9, directory_daily_quota_set = $10, updated = $11`,
      [
        accountId,
        limits.modelRpm ?? null,
        limits.modelTpm ?? null,
        limits.imagesPerMinute ?? null,
        limits.audioSecondsPerMinute ?? null,
        limits.directoryRps ?? null,
        limits.directoryBurst ?? null,
        limits.directoryBurstSeconds ?? null,
        limits.directoryDailyQuota ?? null,
        limits.directoryDailyQuota !== undefined,
        now,
      ],
    );
  }

  /** Puts the account back on its plan's limits (keeping when). */
  remove(accountId: string, now = Math.floor(Date.now() / 1000)): Promise<void> {
    return this.set(accountId, {}, now);
  }
}

/** What an account's keys are allowed: its plan's figures, each replaced by its custom one when set. */
export function accountLimits(
  accountId: string,
  who: LimitsOf,
  updated: number | null,
  settings: LimitSettings,
): AccountLimits {
  const directory = directoryFigures(who, settings);
  return {
    object: 'account_limits',
    account_id: accountId,
    custom: who.limits !== undefined,
    model: {
      requests_per_minute: modelRequestBucket(who, settings).quota,
      tokens_per_minute: modelTokenBucket(who, settings).quota,
      images_per_minute: mediaBucket(who, 'images', settings).quota,
      audio_seconds_per_minute: mediaBucket(who, 'audio_seconds', settings).quota,
    },
    directory: {
      requests_per_second: directory.rps,
      burst_per_second: directory.burst,
      burst_seconds: directory.burstSeconds,
      daily_quota: directory.dailyQuota,
    },
    updated,
  };
}
