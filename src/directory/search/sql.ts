// The SQL path of search: the page ranked by PostgreSQL (or PGlite) from the listings table, for
// what ranking in memory does not serve (open_now, phrases and operators, memoryRanking off).
// The formula is the one memory.ts computes, written in SQL.
import type { SearchMode } from '../../../generated/directory/client/types.gen.ts';
import type { Db } from '../../platform/db.ts';
import { boundingBox, haversineSql } from '../geo.ts';
import type { Similar } from '../vectors.ts';
import type { Cursor } from './cursor.ts';
import { BAYES_C, RRF_K } from './score.ts';
import type { Filters, Row, SearchParams, Snapshot } from './shapes.ts';

export interface SqlQuery {
  params: SearchParams;
  /** the filters as resolved (the city by its names, the country it implies) */
  filters: Filters;
  mode: SearchMode;
  q: string | undefined;
  /** the keyword query's tsquery in each configuration (keyword and hybrid), else undefined */
  variants: string[] | undefined;
  /** the semantic set (semantic and hybrid) */
  sem: Similar | undefined;
  near: { lat: number; lon: number } | undefined;
  radius: number;
  snapshot: Snapshot;
  /** the instant open_now is evaluated at (ms) */
  at: number;
  cursor: Cursor | undefined;
  limit: number;
}

export async function sqlPage(db: Db, query: SqlQuery): Promise<Row[]> {
  const { params, filters, mode, q, variants, sem, near, radius, snapshot, at, cursor, limit } = query;
  const useKeyword = variants !== undefined;
  const useSemantic = sem !== undefined;
  const sql: string[] = [];
  const args: unknown[] = [];
  const arg = (value: unknown, cast = '') => {
    args.push(value);
    return `$${args.length}${cast}`;
  };
  const snap = arg(snapshot.seq, '::bigint');
  const where: string[] = [`l.seq <= ${snap}`];
  let tsquery = 'null::tsquery';
  if (variants) {
    tsquery = variants.length > 0 ? variants.map((v) => `${arg(v)}::tsquery`).join(' || ') : `''::tsquery`;
  }
  if (params.activity !== undefined) where.push(`l.activity_path @> array[${arg(params.activity)}]::text[]`);
  if (filters.country !== undefined) where.push(`l.country = ${arg(filters.country)}`);
  if (filters.city) {
    where.push(
      `(l.city_folded = any(${arg(filters.city.cities, '::text[]')}) or l.district_folded = any(${arg(filters.city.districts, '::text[]')}))`,
    );
  }
  if (params.claimed !== undefined) where.push(`l.claimed = ${arg(params.claimed)}`);
  if (params.min_rating !== undefined) where.push(`l.rating >= ${arg(params.min_rating, '::float8')}`);
  let distance = 'null::float8';
  if (near) {
    const lat = arg(near.lat, '::float8');
    const lon = arg(near.lon, '::float8');
    const box = boundingBox(near.lat, near.lon, radius);
    where.push(
      `l.lat between ${arg(box.minLat, '::float8')} and ${arg(box.maxLat, '::float8')}`,
      `l.lon between ${arg(box.minLon, '::float8')} and ${arg(box.maxLon, '::float8')}`,
    );
    distance = haversineSql(lat, lon, 'l.lat', 'l.lon');
    where.push(`${distance} <= ${arg(radius, '::float8')}`);
  }
  if (params.open_now !== undefined) {
    const t = arg(new Date(at).toISOString(), '::timestamptz');
    const local = `(${t} at time zone l.time_zone)`;
    const minuteOfWeek = `(extract(dow from ${local})::int * 1440 + extract(hour from ${local})::int * 60 + extract(minute from ${local})::int)`;
    const open = `(coalesce(l.special_open @> ${t}, false) or (not coalesce(l.special_cover @> ${t}, false) and l.week_open @> ${minuteOfWeek}))`;
    where.push(`l.time_zone is not null`, `${open} = ${arg(params.open_now)}`);
  }

  // The rows scored: the semantic set, the keyword matches (GIN), or both (their union, so
  // neither side scans the table); filters only: the table under the filters' indexes.
  let from = 'listings l';
  if (sem) {
    const seqs = arg(Array.from(sem.seqs), '::bigint[]');
    const sims = arg(Array.from(sem.sims), '::float8[]');
    from =
      mode === 'semantic'
        ? `unnest(${seqs}, ${sims}) as s(seq, sim) join listings l on l.seq = s.seq`
        : `(select seq from listings where tsv @@ (select query from q) and seq <= ${snap}
            union select unnest(${seqs})) c
           join listings l on l.seq = c.seq
           left join unnest(${seqs}, ${sims}) as s(seq, sim) on s.seq = l.seq`;
  }
  if (mode === 'keyword' && useKeyword) where.push('l.tsv @@ (select query from q)');

  const mean = arg(snapshot.mean, '::float8');
  const bayes = `((${BAYES_C} * ${mean} + l.review_count * coalesce(l.rating, ${mean})) / (${BAYES_C} + l.review_count))`;
  const trust = `(0.5 * (b.bayes - 1) / 4 + 0.2 * least(1, ln(1 + b.review_count) / ln(1001)) + 0.15 * (case when b.claimed then 1 else 0 end) + 0.15 * coalesce(1 / (1 + b.response_time / 60.0), 0))`;
  let relevance = 'null::float8';
  if (q && mode === 'keyword') relevance = 'r.kw';
  if (q && mode === 'semantic') relevance = 'greatest(0, least(1, r.sim))';
  if (q && mode === 'hybrid') {
    relevance = `((coalesce(1.0 / (${RRF_K} + r.kw_rank), 0) + coalesce(1.0 / (${RRF_K} + r.sem_rank), 0)) / (2.0 / (${RRF_K} + 1)))`;
  }
  // in keyword mode every row scored matches already
  const rank = 'ts_rank_cd(l.tsv, (select query from q), 32)';
  const kw = !useKeyword
    ? 'null::float8'
    : mode === 'keyword'
      ? rank
      : `case when l.tsv @@ (select query from q) then ${rank} end`;
  const base = q
    ? `(0.7 * ${relevance} + 0.3 * ${trust.replaceAll('b.', 'r.')})`
    : trust.replaceAll('b.', 'r.');
  const withNear = near
    ? `(0.9 * ${base} + 0.1 * greatest(0, 1 - r.dist / ${arg(radius, '::float8')}))`
    : base;

  sql.push(
    `with q as (select ${tsquery} as query),`,
    `b as (`,
    `  select l.seq, l.id, l.review_count, l.claimed, l.response_time,`,
    `    ${kw} as kw,`,
    `    ${useSemantic ? 's.sim' : 'null::float8'} as sim,`,
    `    ${bayes} as bayes,`,
    `    ${distance} as dist`,
    `  from ${from}`,
    `  where ${where.join(' and ')}`,
    `),`,
    `r as (`,
    `  select b.*,`,
    // the ranks only hybrid fuses (each a sort of every row scored)
    mode === 'hybrid'
      ? `    case when b.kw is not null then row_number() over (partition by b.kw is null order by b.kw desc, b.id) end as kw_rank,
           case when b.sim is not null then row_number() over (partition by b.sim is null order by b.sim desc, b.id) end as sem_rank`
      : `    null::bigint as kw_rank, null::bigint as sem_rank`,
    `  from b`,
    `),`,
    `scored as (select r.seq, r.id, r.kw, r.sim, r.bayes, r.dist, round((${withNear})::numeric, 6)::float8 as score from r),`,
    `page as (`,
    `  select * from scored`,
    cursor
      ? `  where score < ${arg(cursor.sc, '::float8')} or (score = ${arg(cursor.sc, '::float8')} and id > ${arg(cursor.id)})`
      : '',
    `  order by score desc, id asc`,
    `  limit ${arg(limit + 1, '::int')}`,
    `)`,
    // the profiles (the wide column) of this page only
    `select page.*, l.profile from page join listings l on l.seq = page.seq order by page.score desc, page.id asc`,
  );
  return db.query<Row>(sql.join('\n'), args);
}
