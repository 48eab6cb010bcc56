// The reads of usage_records, the table metering.ts writes: the sums of GET /v1/usage and of the
// monthly statement, an account's rows for its export, and the retention's roll-up. Other folders
// call these rather than naming the table (src/conventions.test.ts).
import type { ServiceName } from './app.ts';
import type { Queryable } from './db.ts';

/** What a usage sum adds up, per group. */
export interface UsageSums {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  audio_seconds: number;
  images: number;
  steps: number;
  units: number;
  cost_nano: number;
}

/** The dimensions a usage sum may filter and group by, each a column of usage_records. */
export const USAGE_DIMENSIONS = ['model', 'project_id', 'key_id'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

export interface UsageSumQuery {
  accountId: string;
  service: ServiceName;
  /** First and last day, inclusive, as YYYY-MM-DD. */
  from: string;
  to: string;
  bucket: 'day' | 'month';
  filters: Partial<Record<UsageDimension, string>>;
  /** Grouped by these, in this order (the order of the groups within a bucket). */
  groupBy: UsageDimension[];
}

/** One group of a usage sum: its bucket (YYYY-MM-DD or YYYY-MM), the values of groupBy in order, its sums. */
export interface UsageGroup {
  bucket: string;
  values: Array<string | null>;
  sums: UsageSums;
}

/** The usage of one account and service, summed per bucket and per group, in bucket then group order. */
export async function sumUsage(db: Queryable, query: UsageSumQuery): Promise<UsageGroup[]> {
  const params: unknown[] = [query.accountId, query.service, query.from, query.to];
  let where = 'account_id = $1 and service = $2 and day between $3::date and $4::date';
  for (const column of USAGE_DIMENSIONS) {
    const value = query.filters[column];
    if (value === undefined) continue;
    params.push(value);
    where += ` and ${column} = $${params.length}`;
  }
  // named in the statement: only the known columns
  const groups = query.groupBy.filter((d) => USAGE_DIMENSIONS.includes(d));
  const bucketExpr = query.bucket === 'day' ? `to_char(day, 'YYYY-MM-DD')` : `to_char(day, 'YYYY-MM')`;
  const dimSelect = groups.map((g, i) => `${g} as d${i}`).join(', ');
  const order = groups.map((_, i) => `, ${i + 2}`).join('');
  const rows = await db.query<Record<string, string | number | null>>(
    `select ${bucketExpr} as bucket${dimSelect ? `, ${dimSelect}` : ''},
       sum(requests)::bigint as requests, sum(input_tokens)::bigint as input_tokens,
       sum(output_tokens)::bigint as output_tokens, sum(audio_seconds)::float8 as audio_seconds,
       sum(images)::bigint as images, sum(steps)::bigint as steps, sum(units)::bigint as units,
       sum(cost_nano)::bigint as cost_nano
     from usage_records where ${where}
     group by 1${order}
     order by 1${order}`,
    params,
  );
  return rows.map((row) => ({
    bucket: row.bucket as string,
    values: groups.map((_, i) => (row[`d${i}`] as string | null) ?? null),
    sums: {
      requests: Number(row.requests),
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
      audio_seconds: Number(row.audio_seconds),
      images: Number(row.images),
      steps: Number(row.steps),
      units: Number(row.units),
      cost_nano: Number(row.cost_nano),
    },
  }));
}

/** How many calls of one service's `model` (interface) the account made this calendar month (UTC), so far. */
export async function callsThisMonth(
  db: Queryable,
  accountId: string,
  service: ServiceName,
  model: string,
): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `select coalesce(sum(requests), 0)::int as n from usage_records
     where account_id = $1 and service = $2 and model = $3 and day >= date_trunc('month', now() at time zone 'utc')::date`,
    [accountId, service, model],
  );
  return row?.n ?? 0;
}

/** An account's calls and cost per service and model over days `from` (inclusive) to `to` (exclusive). */
export async function usageByModel(
  db: Queryable,
  accountId: string,
  from: string,
  to: string,
): Promise<Array<{ service: string; model: string; requests: number; cost: number }>> {
  const rows = await db.query<{ service: string; model: string; requests: number; cost: number }>(
    `select service, model, sum(requests)::bigint as requests, sum(cost_nano)::bigint as cost from usage_records
     where account_id = $1 and day >= $2::date and day < $3::date group by 1, 2 order by 1, 2`,
    [accountId, from, to],
  );
  return rows.map((r) => ({ ...r, requests: Number(r.requests), cost: Number(r.cost) }));
}

/** Every usage row of the account, oldest first (its data export). */
export function usageRecordsOf(db: Queryable, accountId: string): Promise<Array<Record<string, unknown>>> {
  return db.query('select * from usage_records where account_id = $1 order by created, id', [accountId]);
}

const SUMS = `sum(input_tokens), sum(output_tokens), sum(audio_seconds), sum(images), sum(steps), sum(units),
  sum(cost_nano), sum(requests)`;

/**
 * Rolls usage records created before `cutoff` (and not rolled to `level` yet) into one row per
 * group: sums and the day kept, everything else of the calls gone (`day`: per key and project;
 * `account`: those too). Reports and statements sum the rows, so their figures do not change.
 * How many rows it made.
 */
export async function rollUpUsage(db: Queryable, cutoff: number, level: 'day' | 'account'): Promise<number> {
  const [project, key] = level === 'day' ? ['project_id', 'key_id'] : [`''`, `''`];
  const groups =
    level === 'day'
      ? 'service, account_id, project_id, key_id, model, day'
      : 'service, account_id, model, day';
  const done =
    level === 'day' ? `endpoint in ('rollup:day', 'rollup:account')` : `endpoint = 'rollup:account'`;
  const rows = await db.query(
    `with gone as (delete from usage_records where created < $1 and not (${done}) returning *)
     insert into usage_records (id, service, account_id, project_id, key_id, model, endpoint, input_tokens,
       output_tokens, audio_seconds, images, steps, units, cost_nano, requests, status, latency_ms, created, day)
     select 'usg_' || substr(md5(random()::text || clock_timestamp()::text || account_id), 1, 26), service,
       account_id, ${project}, ${key}, model, 'rollup:${level}', ${SUMS}, 0, 0, min(created), day
     from gone group by ${groups}
     returning id`,
    [cutoff],
  );
  return rows.length;
}
