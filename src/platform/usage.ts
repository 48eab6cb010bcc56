// One usage record per billable call (DESIGN.md): who, what, how much, what it cost in integer
// nano-EUR, how it ended. GET /v1/usage of each service sums these rows and nothing else.
import type { Queryable } from './db.ts';
import { newId } from './ids.ts';
import type { Principal } from './principal.ts';

export interface UsageRecord {
  service: 'model' | 'directory';
  /** Model id (model API) or interface name (`search`, `places`, `sales`, `concierge`). */
  model: string | null;
  endpoint: string;
  inputTokens?: number;
  outputTokens?: number;
  audioSeconds?: number;
  images?: number;
  steps?: number;
  /** Billable units of the directory (requests, replies, tasks). */
  units?: number;
  costNano: number;
  status: number;
  latencyMs: number;
  streamed?: boolean;
  /** The client left before the answer was complete (billed for what was produced). */
  disconnected?: boolean;
}

export const NANO_PER_EUR = 1_000_000_000;

/** nano-EUR (integer) to the wire's decimal string: 123450 -> "0.000123450". */
export function formatEur(nano: number): string {
  const sign = nano < 0 ? '-' : '';
  const abs = Math.abs(Math.round(nano));
  const whole = Math.floor(abs / NANO_PER_EUR);
  const frac = String(abs % NANO_PER_EUR).padStart(9, '0');
  return `${sign}${whole}.${frac}`;
}

export async function recordUsage(db: Queryable, principal: Principal, record: UsageRecord): Promise<void> {
  const now = Date.now();
  await db.query(
    `insert into usage_records (id, service, account_id, project_id, key_id, model, endpoint, input_tokens,
       output_tokens, audio_seconds, images, steps, units, cost_nano, status, latency_ms, streamed, disconnected,
       created, day)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20)`,
    [
      newId('usg', now),
      record.service,
      principal.accountId,
      principal.projectId,
      principal.keyId,
      record.model,
      record.endpoint,
      record.inputTokens ?? 0,
      record.outputTokens ?? 0,
      record.audioSeconds ?? 0,
      record.images ?? 0,
      record.steps ?? 0,
      record.units ?? 0,
      Math.round(record.costNano),
      record.status,
      Math.round(record.latencyMs),
      record.streamed ?? false,
      record.disconnected ?? false,
      Math.floor(now / 1000),
      new Date(now).toISOString().slice(0, 10),
    ],
  );
}
