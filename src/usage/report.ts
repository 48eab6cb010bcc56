// GET /v1/usage of both services: the usage records of the caller's account summed over whole
// UTC days in day or month buckets, grouped and filtered by the service's dimensions. Totals
// are the sums of the same rows, so they equal the sum of every result.
import type { Queryable } from '../platform/db.ts';
import { BadRequestError } from '../platform/errors.ts';
import { flushUsage } from '../platform/metering.ts';
import {
  sumUsage,
  type UsageDimension,
  type UsageSumQuery,
  type UsageSums,
} from '../platform/usage-records.ts';
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

/** How a service's report reads the usage records (platform/usage-records.ts). */
export interface ReportShape<Result> {
  service: ServiceName;
  /** Dimension name on the wire -> the usage records' dimension it names. */
  dimensions: Record<string, UsageDimension>;
  /** Builds one result from its group's dimension values and summed metrics. */
  result(dims: Record<string, string | null>, sums: Sums): Result;
}

export type Sums = UsageSums;

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
  // the wire's dimension names, as columns of usage_records
  const column = (name: string) => shape.dimensions[name];
  const groups = query.groupBy.filter((g) => column(g));
  const filters: UsageSumQuery['filters'] = {};
  for (const [name, value] of Object.entries(query.filters)) {
    const c = column(name);
    if (value !== undefined && c) filters[c] = value;
  }
  const rows = await sumUsage(db, {
    accountId,
    service: shape.service,
    from: query.from,
    to: query.to,
    bucket: query.bucket,
    filters,
    groupBy: groups.map((g) => column(g) as UsageDimension),
  });
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
  for (const { bucket, values, sums } of rows) {
    for (const k of Object.keys(totals) as Array<keyof Sums>) totals[k] += sums[k];
    const dims: Record<string, string | null> = {};
    for (const name of Object.keys(shape.dimensions)) dims[name] = null;
    groups.forEach((g, i) => {
      dims[g] = values[i] ?? null;
    });
    const list = byBucket.get(bucket) ?? [];
    list.push(shape.result(dims, sums));
    byBucket.set(bucket, list);
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
