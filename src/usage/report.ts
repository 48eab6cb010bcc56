// GET /v1/usage of both services: the usage records of the caller's account summed over whole
// UTC days in day or month buckets, grouped and filtered by the service's dimensions. Totals
// are the sums of the same rows, so they equal the sum of every result.
import type { Queryable } from '../platform/db.ts';
import { BadRequestError } from '../platform/errors.ts';
import { flushUsage } from '../platform/metering.ts';
import type { ServiceName } from '../platform/app.ts';

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

export interface ReportQuery {
  from: string;
  to: string;
  bucket: 'day' | 'month';
  groupBy: string[];
  filters: Record<string, string | undefined>;
}

/** How a service's report reads the usage_records table. */
export interface ReportShape<Result> {
  service: ServiceName;
  /** Dimension name on the wire -> column of usage_records. */
  dimensions: Record<string, string>;
  /** Builds one result from its group's dimension values and summed metrics. */
  result(dims: Record<string, string | null>, sums: Sums): Result;
}

export interface Sums {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  audio_seconds: number;
  images: number;
  steps: number;
  units: number;
  cost_nano: number;
}

export function parseDay(value: string, param: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const time = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (!match || Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== value) {
    throw new BadRequestError('invalid_date', `'${value}' is not a real day in the form YYYY-MM-DD.`, {
      param,
    });
  }
  return time;
}

const iso = (time: number) => new Date(time).toISOString().slice(0, 10);

function buckets(from: number, to: number, size: 'day' | 'month'): Array<{ start: string; end: string }> {
  const out: Array<{ start: string; end: string }> = [];
  let start = from;
  while (start <= to) {
    const d = new Date(start);
    const next = size === 'day' ? start + DAY_MS : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    const end = Math.min(next - DAY_MS, to);
    out.push({ start: iso(start), end: iso(end) });
    start = next;
  }
  return out;
}

export async function usageReport<Result>(
  db: Queryable,
  accountId: string,
  shape: ReportShape<Result>,
  query: ReportQuery,
) {
  await flushUsage(db); // this process's journal first: a call answered here is in the report
  const from = parseDay(query.from, 'from');
  const to = parseDay(query.to, 'to');
  if (from > to) throw new BadRequestError('invalid_period', '`from` is after `to`.', { param: 'from' });
  if ((to - from) / DAY_MS + 1 > MAX_DAYS) {
    throw new BadRequestError('invalid_period', `The period is longer than ${MAX_DAYS} days.`, {
      param: 'to',
    });
  }
  const params: unknown[] = [accountId, shape.service, query.from, query.to];
  let where = 'account_id = $1 and service = $2 and day between $3::date and $4::date';
  for (const [name, value] of Object.entries(query.filters)) {
    const column = shape.dimensions[name];
    if (value === undefined || !column) continue;
    params.push(value);
    where += ` and ${column} = $${params.length}`;
  }
  const groups = query.groupBy.filter((g) => shape.dimensions[g]);
  const bucketExpr = query.bucket === 'day' ? `to_char(day, 'YYYY-MM-DD')` : `to_char(day, 'YYYY-MM')`;
  const dimSelect = groups.map((g, i) => `${shape.dimensions[g]} as d${i}`).join(', ');
  const rows = await db.query<Record<string, string | number | null>>(
    `select ${bucketExpr} as bucket${dimSelect ? `, ${dimSelect}` : ''},
       sum(requests)::bigint as requests, sum(input_tokens)::bigint as input_tokens,
       sum(output_tokens)::bigint as output_tokens, sum(audio_seconds)::float8 as audio_seconds,
       sum(images)::bigint as images, sum(steps)::bigint as steps, sum(units)::bigint as units,
       sum(cost_nano)::bigint as cost_nano
     from usage_records where ${where}
     group by 1${groups.map((_, i) => `, ${i + 2}`).join('')}
     order by 1${groups.map((_, i) => `, ${i + 2}`).join('')}`,
    params,
  );
  const totals: Sums = {
    requests: 0,
    input_tokens: 0,
    output_tokens: 0,
    audio_seconds: 0,
    images: 0,
    steps: 0,
    units: 0,
    cost_nano: 0,
  };
  const byBucket = new Map<string, Result[]>();
  for (const row of rows) {
    const sums: Sums = {
      requests: Number(row.requests),
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
      audio_seconds: Number(row.audio_seconds),
      images: Number(row.images),
      steps: Number(row.steps),
      units: Number(row.units),
      cost_nano: Number(row.cost_nano),
    };
    for (const k of Object.keys(totals) as Array<keyof Sums>) totals[k] += sums[k];
    const dims: Record<string, string | null> = {};
    for (const name of Object.keys(shape.dimensions)) dims[name] = null;
    groups.forEach((g, i) => {
      dims[g] = (row[`d${i}`] as string | null) ?? null;
    });
    const list = byBucket.get(row.bucket as string) ?? [];
    list.push(shape.result(dims, sums));
    byBucket.set(row.bucket as string, list);
  }
  return {
    totals,
    data: buckets(from, to, query.bucket).map(({ start, end }) => ({
      start,
      end,
      results: byBucket.get(query.bucket === 'day' ? start : start.slice(0, 7)) ?? [],
    })),
  };
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
