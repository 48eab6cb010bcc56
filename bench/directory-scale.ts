// How the directory grows with its listings (issue 22, point 3): index build time, time to
// ready and RSS at 1M, 2M and 4M listings on PostgreSQL. Not part of `npm test`.
//
//   npm run bench:directory-scale -- [--base eurus_speed_1m] [--sizes 1000000,2000000,4000000]
//        [--workers 1] [--server postgres://eurus:eurus@127.0.0.1:5432] [--out FILE.json]
//
// The base database holds the generated listings (made once by `npm run bench:directory --
// --storage postgres` with DATABASE_URL naming it). The larger sizes are made in a scratch
// database (`eurus_bench_scale`, copied from the base each run) by copying its rows with new
// ids until it holds the size: the demo generator writes about 400 listings a second through the
// import (embeddings included), so 4M generated listings would take hours. The copies share
// their names, places and words with the originals, so the keyword dictionary does not grow as
// it would with new companies: for that part the figures are a lower bound. For each size the
// secondary indexes are dropped before the copy and built after, timed (PostgreSQL's index
// build); then the service starts on it (`node src/main.ts directory`) and we time /readyz (the
// in-memory search index read and built) and read its RSS 5 s later.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ROOT, rssMb, startService } from './service.ts';

const { values: opts } = parseArgs({
  options: {
    base: { type: 'string', default: 'eurus_speed_1m' },
    scratch: { type: 'string', default: 'eurus_bench_scale' },
    sizes: { type: 'string', default: '1000000,2000000,4000000' },
    workers: { type: 'string', default: '1' },
    server: { type: 'string', default: 'postgres://eurus:eurus@127.0.0.1:5432' },
    out: { type: 'string' },
  },
});
const SIZES = opts.sizes
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const WORKERS = Number(opts.workers);
const urlOf = (database: string) => `${opts.server}/${database}`;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const log = (message: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${message}`);
const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;

async function withClient<T>(database: string, run: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlOf(database) });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

const count = (c: pg.Client) =>
  c.query<{ n: number }>('select count(*)::int as n from listings').then((r) => r.rows[0]?.n ?? 0);

const baseCount = await withClient(opts.base, count);
if (baseCount > SIZES[0]!) throw new Error(`${opts.base} holds ${baseCount} listings, more than ${SIZES[0]}`);
log(`base ${opts.base}: ${baseCount} listings; copying it to ${opts.scratch}, load ${load()}`);
let started = performance.now();
await withClient('postgres', async (c) => {
  await c.query(`drop database if exists ${opts.scratch}`);
  await c.query(`create database ${opts.scratch} template ${opts.base}`);
});
log(`  copied in ${seconds(started)} s`);

interface SizeFigures {
  listings: number;
  copy_s: number;
  index_build_s: number;
  database_mb: number;
  workers: number;
  ready_s: number;
  rss_mb: number;
  hwm_mb: number;
  mb_per_million: number;
  load_avg: string;
}
const results: SizeFigures[] = [];
let generation = 0;
for (const size of SIZES) {
  let copySeconds = 0;
  let indexSeconds = 0;
  const database = await withClient(opts.scratch, async (c) => {
    let n = await count(c);
    if (n < size) {
      const { rows: indexes } = await c.query<{ indexname: string; indexdef: string }>(
        `select indexname, indexdef from pg_indexes
         where schemaname = current_schema() and tablename = 'listings'
           and indexname not in (select conname from pg_constraint where conrelid = 'listings'::regclass)`,
      );
      for (const { indexname } of indexes) await c.query(`drop index ${indexname}`);
      const { rows: columns } = await c.query<{ column_name: string }>(
        `select column_name from information_schema.columns
         where table_schema = current_schema() and table_name = 'listings'
           and is_generated = 'NEVER' and identity_generation is null
         order by ordinal_position`,
      );
      const names = columns.map((col) => col.column_name);
      started = performance.now();
      while (n < size) {
        generation++;
        // a new id of the same length (lst_ and 26 characters of Crockford's alphabet)
        const newId = `'lst_' || upper(substr(md5(id || '/${generation}'), 1, 26))`;
        const values = names.map((name) =>
          name === 'id'
            ? newId
            : name === 'profile'
              ? `jsonb_set(profile, '{id}', to_jsonb(${newId}))`
              : name,
        );
        const { rowCount } = await c.query(
          `insert into listings (${names.join(', ')})
           select ${values.join(', ')} from listings order by seq limit $1`,
          [Math.min(n, size - n)],
        );
        n += rowCount ?? 0;
        log(`  ${n} listings (copy ${generation}), load ${load()}`);
      }
      copySeconds = seconds(started);
      started = performance.now();
      for (const { indexname, indexdef } of indexes) {
        const t = performance.now();
        await c.query(indexdef);
        log(`    ${indexname}: ${seconds(t)} s`);
      }
      indexSeconds = seconds(started);
      await c.query('vacuum analyze listings');
    }
    const { rows } = await c.query<{ mb: number }>(
      'select (pg_database_size(current_database()) / 1048576)::int as mb',
    );
    return { listings: n, mb: rows[0]?.mb ?? 0 };
  });
  log(`${database.listings} listings, database ${database.mb} MB; starting the service, load ${load()}`);
  const service = await startService({
    DATABASE_URL: urlOf(opts.scratch),
    ...(WORKERS > 1
      ? { WORKERS: String(WORKERS), REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }
      : {}),
  });
  await new Promise((r) => setTimeout(r, 5000));
  const { rss, hwm } = rssMb(service.pid);
  const search = await fetch(`${service.url}/v1/search?q=plumber&limit=3`, {
    headers: { authorization: `Bearer ${service.key}` },
  });
  if (!search.ok) throw new Error(`search answered ${search.status}: ${await search.text()}`);
  await service.stop();
  const figures: SizeFigures = {
    listings: database.listings,
    copy_s: copySeconds,
    index_build_s: indexSeconds,
    database_mb: database.mb,
    workers: WORKERS,
    ready_s: service.ready_s,
    rss_mb: rss,
    hwm_mb: hwm,
    mb_per_million: Math.round(rss / (database.listings / 1e6)),
    load_avg: load(),
  };
  log(`  ready in ${figures.ready_s} s, RSS ${rss} MB (peak ${hwm} MB)`);
  results.push(figures);
}

const report = { date: new Date().toISOString(), base: opts.base, results };
const out =
  opts.out ?? `bench/results/directory-scale-${report.date.slice(0, 16).replace(/[T:]/g, '-')}.json`;
writeFileSync(resolve(ROOT, out), `${JSON.stringify(report, null, 2)}\n`);
console.log(
  '| listings | PostgreSQL index build s | database MB | service ready s | RSS MB | peak MB | MB per million |',
);
console.log(
  '| -------: | -----------------------: | ----------: | --------------: | -----: | ------: | -------------: |',
);
for (const r of results) {
  console.log(
    `| ${r.listings.toLocaleString('en')} | ${r.index_build_s || '-'} | ${r.database_mb} | ${r.ready_s} | ${r.rss_mb} | ${r.hwm_mb} | ${r.mb_per_million} |`,
  );
}
console.log(`\n${out}`);
