// Directory search benchmark (issue 4, point 7): a million listings on PGlite and on PostgreSQL;
// keyword, semantic and hybrid search, each with and without a geo filter; p50/p95/p99 and
// requests/s through the real HTTP service; the load time, the index build time, the server's
// memory; and one key's burst at 600 requests/s against the p99 goal. Not part of `npm test`.
//
//   npm run bench:directory -- [--storage pglite,postgres] [--listings 1000000] [--duration 15]
//                              [--connections 4] [--burst-rate 600] [--burst-duration 10]
//                              [--dir .tmp/bench] [--out FILE.json] [--only load|burst|scenarios]
//                              [--workers N] [--reuse]
//
// --reuse takes the database as it is (DATABASE_URL, or DIR/pglite-N) when it holds exactly N
// listings, with no JSONL file and no marker of an import by this script (e.g. a directory
// imported elsewhere); it stops if the count differs, and never empties the table.
//
// --workers N runs the PostgreSQL service as N instances on one port (WORKERS, src/cluster.ts:
// threads of one process over one search index), with REDIS_URL (default: the test Redis,
// redis://127.0.0.1:6379) for their shared limits; PGlite is one instance's database and always
// runs one. RSS is the process's (and any child process's, added up).
//
// The listings are generated once (src/directory/generate.ts) into DIR/listings-N.jsonl and
// imported once per storage (importListings of src/directory/import.ts): PGlite under DIR/pglite-N, PostgreSQL at
// DATABASE_URL (default: the database `eurus_bench_directory` on the test cluster, created
// when missing). Later runs reuse both when they hold exactly N listings. The import drops the
// listings' secondary indexes first and builds them after, timed: that is the index build
// time. Each service run is a child process (`node src/main.ts directory`); the load comes
// from autocannon in another child process (bench/load.ts). The burst runs twice: on the
// service as deployed (real limits, search caches on, after one warm-up pass over the mix) and
// with SEARCH_CACHE=off; the per-mode scenarios run with the caches off, so every request
// ranks (cold figures), 4 connections back to back.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { writeListings } from '../src/directory/generate.ts';
import { importListings } from '../src/directory/import.ts';
import { type Db } from '../src/platform/db.ts';
import { openStorage } from '../src/storage.ts';
import type { LoadResult } from './load.ts';
import { NODE, ROOT, rssMb, type Service, startService } from './service.ts';

const { values: opts } = parseArgs({
  options: {
    storage: { type: 'string', default: 'pglite,postgres' },
    listings: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '4' },
    'burst-rate': { type: 'string', default: '600' },
    'burst-duration': { type: 'string', default: '10' },
    dir: { type: 'string', default: '.tmp/bench' },
    out: { type: 'string' },
    only: { type: 'string' },
    workers: { type: 'string', default: '1' },
    reuse: { type: 'boolean', default: false },
  },
});
const WORKERS = Number(opts.workers);
const N = Number(opts.listings);
const DIR = resolve(ROOT, opts.dir);
const DURATION = Number(opts.duration);
const CONNECTIONS = Number(opts.connections);
mkdirSync(DIR, { recursive: true });

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const log = (message: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${message}`);

// --- the query mix -------------------------------------------------------------------------

/** Keyword queries: trade words in the directory's languages, a few plurals and accents. */
const KEYWORDS = [
  'plumber',
  'Klempner',
  'plombier',
  'fontanero',
  'idraulico',
  'loodgieter',
  'electrician',
  'Elektriker',
  'dentist',
  'Zahnarzt',
  'boulangerie',
  'panadería',
  'bakery',
  'restaurant',
  'hair salon',
  'Friseur',
  'car repair',
  'Autowerkstatt',
  'accountant',
  'Steuerberater',
  'lawyer',
  'avocat',
  'hotel',
  'florist',
];
/** Semantic and hybrid queries: needs in plain words, in several languages. */
const NEEDS = [
  'my kitchen pipe is leaking',
  'Wasserrohrbruch, der Wasserhahn tropft',
  'fuite sous l’évier',
  'the lights keep flickering',
  'le luci sfarfallano',
  'toothache',
  'dolor de muelas',
  'ból zęba',
  'fresh bread in the morning',
  'I need a haircut',
  'the brakes are squeaking',
  'help with my tax return',
  'a room for the night',
  'flowers for a wedding',
  'dinner for two',
  'the heating is broken',
];
/** Centres of the geo filter (lat, lon), all within the demo directory. */
const NEAR = [
  '52.52,13.405', // Berlin
  '48.8566,2.3522', // Paris
  '40.4168,-3.7038', // Madrid
  '45.4642,9.19', // Milano
  '52.3676,4.9041', // Amsterdam
  '48.1351,11.582', // München
  '48.2082,16.3738', // Wien
  '50.8503,4.3517', // Bruxelles
];

type Mode = 'keyword' | 'semantic' | 'hybrid';
interface Scenario {
  mode: Mode;
  geo: boolean;
}
const SCENARIOS: Scenario[] = (['keyword', 'semantic', 'hybrid'] as const).flatMap((mode) => [
  { mode, geo: false },
  { mode, geo: true },
]);

function paths({ mode, geo }: Scenario): string[] {
  const queries = mode === 'keyword' ? KEYWORDS : mode === 'semantic' ? NEEDS : [...KEYWORDS, ...NEEDS];
  return queries.map((q, i) => {
    const params = new URLSearchParams({ q, mode, limit: '20' });
    if (geo) {
      params.set('near', NEAR[i % NEAR.length] ?? '');
      params.set('radius_km', '25');
    }
    return `/v1/search?${params.toString()}`;
  });
}

// --- data ----------------------------------------------------------------------------------

async function ensureJsonl(): Promise<string> {
  const file = join(DIR, `listings-${N}.jsonl`);
  if (existsSync(file) && existsSync(`${file}.done`)) return file;
  log(`generating ${N} listings into ${file}`);
  const started = performance.now();
  const out = createWriteStream(file);
  await writeListings(out, N, 'eurus-bench', (n) => log(`  ${n} listings written`));
  out.end();
  await once(out, 'finish');
  writeFileSync(`${file}.done`, '');
  log(`generated in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return file;
}

interface LoadFigures {
  reused: boolean;
  import_s: number | null;
  index_build_s: number | null;
  load_avg: string;
}

async function ensureLoaded(db: Db, file: string, marker: string): Promise<LoadFigures> {
  const [row] = await db.query<{ n: number }>('select count(*)::int as n from listings');
  if (opts.reuse) {
    if (row?.n !== N) throw new Error(`--reuse: the database holds ${row?.n ?? 0} listings, not ${N}`);
    log(`  reusing the database's ${N} listings as they are`);
    return { reused: true, import_s: null, index_build_s: null, load_avg: load() };
  }
  if (row?.n === N && existsSync(marker)) {
    log(`  reusing ${N} listings`);
    return JSON.parse(readFileSync(marker, 'utf8')) as LoadFigures;
  }
  await db.query('truncate listings restart identity');
  // Secondary indexes off during the bulk load, built after: the index build time.
  const indexes = await db.query<{ indexname: string; indexdef: string }>(
    `select indexname, indexdef from pg_indexes
     where schemaname = current_schema() and tablename = 'listings'
       and indexname not in (select conname from pg_constraint where conrelid = 'listings'::regclass)`,
  );
  for (const { indexname } of indexes) await db.query(`drop index ${indexname}`);
  log(`  importing (dropped ${indexes.length} secondary indexes), load ${load()}`);
  let started = performance.now();
  const result = await importListings(db, file);
  if (result.errors.length) {
    throw new Error(`import failed: ${JSON.stringify(result.errors.slice(0, 5))}`);
  }
  const importSeconds = (performance.now() - started) / 1000;
  log(`  imported ${result.imported} in ${importSeconds.toFixed(0)} s; building indexes, load ${load()}`);
  started = performance.now();
  for (const { indexname, indexdef } of indexes) {
    const t = performance.now();
    await db.query(indexdef);
    log(`    ${indexname}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  await db.query('analyze listings');
  const figures: LoadFigures = {
    reused: false,
    import_s: Math.round(importSeconds),
    index_build_s: Math.round((performance.now() - started) / 100) / 10,
    load_avg: load(),
  };
  writeFileSync(marker, JSON.stringify({ ...figures, reused: true }));
  log(`  indexes built in ${figures.index_build_s} s`);
  return figures;
}

// --- the service -----------------------------------------------------------------------------

async function runLoad(service: Service, config: Record<string, unknown>): Promise<LoadResult> {
  const child = spawn(
    NODE,
    ['bench/load.ts', JSON.stringify({ url: service.url, key: service.key, ...config })],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  const result = JSON.parse(out) as LoadResult;
  const ms = (x: number) => Math.round(x * 10) / 10;
  return { ...result, p50: ms(result.p50), p95: ms(result.p95), p99: ms(result.p99), max: ms(result.max) };
}

// --- one storage -----------------------------------------------------------------------------

interface ScenarioFigures extends Scenario, LoadResult {
  load_avg: string;
}

interface StorageFigures {
  storage: 'pglite' | 'postgres';
  listings: number;
  load: LoadFigures;
  service_ready_s: number;
  rss_mb_ready: number;
  rss_mb_peak: number;
  database_mb: number;
  scenarios: ScenarioFigures[];
  burst_caches_on: Burst | null;
  /** the same rate on an even schedule, latency from each request's due time */
  burst_caches_on_even?: Burst | null;
  burst_caches_off: Burst | null;
}
type Burst = LoadResult & { rate: number; load_avg: string };

async function ensurePostgres(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
}

async function benchStorage(storage: 'pglite' | 'postgres', file: string): Promise<StorageFigures> {
  log(`${storage}: ${N} listings`);
  const env: Record<string, string> =
    storage === 'postgres'
      ? {
          DATABASE_URL:
            process.env.DATABASE_URL ?? 'postgres://eurus:eurus@127.0.0.1:5432/eurus_bench_directory',
          ...(WORKERS > 1
            ? { WORKERS: String(WORKERS), REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }
            : {}),
        }
      : { DATA_DIR: join(DIR, `pglite-${N}`), DATABASE_URL: '' };
  if (storage === 'postgres' && env.DATABASE_URL) await ensurePostgres(env.DATABASE_URL);
  const db = await openStorage({ databaseUrl: env.DATABASE_URL || undefined, dataDir: env.DATA_DIR ?? '' });
  const loadFigures = await ensureLoaded(db, file, join(DIR, `${storage}-${N}.loaded.json`));
  // a migration may have rewritten the rows (0102 does): dead versions out, statistics fresh
  const vacuumStarted = performance.now();
  await db.query('vacuum analyze listings');
  log(`  vacuum analyze: ${((performance.now() - vacuumStarted) / 1000).toFixed(0)} s`);
  const [size] = await db.query<{ mb: number }>(
    'select (pg_database_size(current_database()) / 1048576)::int as mb',
  );
  await db.close();
  if (opts.only === 'load') {
    return {
      storage,
      listings: N,
      load: loadFigures,
      service_ready_s: 0,
      rss_mb_ready: 0,
      rss_mb_peak: 0,
      database_mb: size?.mb ?? 0,
      scenarios: [],
      burst_caches_on: null,
      burst_caches_on_even: null,
      burst_caches_off: null,
    };
  }

  // The burst first, on a fresh service as deployed (real limits, caches on): one key, 600/s,
  // across the whole query mix, after a short warm-up at 100/s over it.
  log(`  starting the service (real limits), load ${load()}`);
  let service = await startService(env);
  const readySeconds = service.ready_s;
  const rssReady = rssMb(service.pid).rss;
  log(`  ready in ${readySeconds} s, RSS ${rssReady} MB`);
  const mix = shuffle(SCENARIOS.flatMap((s) => paths(s)));
  const rate = Number(opts['burst-rate']);
  const burst = async (label: string): Promise<Burst> => {
    // the warm-up at 100/s: 500 requests, the mix about three times over, leaving the key's
    // sustained allowance (60/s, 16,200 at most) for the burst; unpaced, it took 10,000
    await runLoad(service, { paths: mix, connections: 2, duration: 5, rate: 100 });
    const loadAvg = load();
    const result = await runLoad(service, {
      paths: mix,
      connections: 64,
      duration: Number(opts['burst-duration']),
      rate,
    });
    log(`  burst ${rate}/s (${label}): ${fmt(result)} (load ${loadAvg})`);
    return { rate, ...result, load_avg: loadAvg };
  };
  let burstWarm: Burst | null = null;
  let burstEven: Burst | null = null;
  let burstCold: Burst | null = null;
  if (!opts.only || opts.only === 'burst') {
    burstWarm = await burst('caches on');
    // the same rate on an even schedule (bench/load.ts, `paced`): autocannon's rate sends each
    // second's requests back to back at the start of the second
    const loadAvg = load();
    const even = await runLoad(service, {
      paths: mix,
      connections: 64,
      duration: Number(opts['burst-duration']),
      rate,
      paced: true,
    });
    log(`  burst ${rate}/s (caches on, even): ${fmt(even)} (load ${loadAvg})`);
    burstEven = { rate, ...even, load_avg: loadAvg };
  }
  let peak = rssMb(service.pid).hwm;
  await service.stop();

  // Then, with the caches off (every request ranks) and limits out of the way: the same burst,
  // and each scenario closed-loop.
  const scenarios: ScenarioFigures[] = [];
  service = await startService({ ...env, DIRECTORY_RATE_LIMIT_RPS: '100000', SEARCH_CACHE: 'off' });
  if (!opts.only || opts.only === 'burst') burstCold = await burst('caches off');
  if (!opts.only || opts.only === 'scenarios') {
    for (const scenario of SCENARIOS) {
      const p = paths(scenario);
      await runLoad(service, { paths: p, connections: CONNECTIONS, duration: 3 }); // warm-up
      const loadAvg = load();
      const result = await runLoad(service, { paths: p, connections: CONNECTIONS, duration: DURATION });
      scenarios.push({ ...scenario, ...result, load_avg: loadAvg });
      log(`  ${scenario.mode}${scenario.geo ? ' + geo' : ''}: ${fmt(result)} (load ${loadAvg})`);
    }
  }
  peak = Math.max(peak, rssMb(service.pid).hwm);
  await service.stop();
  return {
    storage,
    listings: N,
    load: loadFigures,
    service_ready_s: readySeconds,
    rss_mb_ready: rssReady,
    rss_mb_peak: peak,
    database_mb: size?.mb ?? 0,
    scenarios,
    burst_caches_on: burstWarm,
    burst_caches_on_even: burstEven,
    burst_caches_off: burstCold,
  };
}

function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  let seed = 42;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const fmt = (r: LoadResult) =>
  `p50 ${r.p50} ms, p95 ${r.p95} ms, p99 ${r.p99} ms, ${r.rps} req/s, statuses ${JSON.stringify(r.statuses)}`;

function table(results: StorageFigures[]): string {
  const lines = [
    '| storage | mode | geo | p50 ms | p95 ms | p99 ms | req/s | load |',
    '| ------- | ---- | --- | -----: | -----: | -----: | ----: | ---- |',
  ];
  for (const r of results) {
    for (const s of r.scenarios) {
      lines.push(
        `| ${r.storage} | ${s.mode} | ${s.geo ? 'near, 25 km' : '-'} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.rps} | ${s.load_avg} |`,
      );
    }
  }
  lines.push(
    '',
    '| storage | import s | index build s | service ready s | RSS ready MB | RSS peak MB | database MB |',
    '| ------- | -------: | ------------: | --------------: | -----------: | ----------: | ----------: |',
  );
  for (const r of results) {
    lines.push(
      `| ${r.storage} | ${r.load.import_s ?? '-'} | ${r.load.index_build_s ?? '-'} | ${r.service_ready_s} | ${r.rss_mb_ready} | ${r.rss_mb_peak} | ${r.database_mb} |`,
    );
  }
  lines.push(
    '',
    '| storage | burst | caches | p50 ms | p95 ms | p99 ms | req/s | statuses | load |',
    '| ------- | ----- | ------ | -----: | -----: | -----: | ----: | -------- | ---- |',
  );
  for (const r of results) {
    for (const [caches, b] of [
      ['on', r.burst_caches_on],
      ['on, even', r.burst_caches_on_even ?? null],
      ['off', r.burst_caches_off],
    ] as const) {
      if (b)
        lines.push(
          `| ${r.storage} | ${b.rate}/s, one key | ${caches} | ${b.p50} | ${b.p95} | ${b.p99} | ${b.rps} | ${JSON.stringify(b.statuses)} | ${b.load_avg} |`,
        );
    }
  }
  return lines.join('\n');
}

const file = opts.reuse ? '' : await ensureJsonl();
const results: StorageFigures[] = [];
for (const storage of (opts.storage ?? '').split(',').filter(Boolean)) {
  if (storage !== 'pglite' && storage !== 'postgres') throw new Error(`unknown storage ${storage}`);
  results.push(await benchStorage(storage, file));
}
const report = {
  date: new Date().toISOString(),
  listings: N,
  connections: CONNECTIONS,
  duration_s: DURATION,
  workers_postgres: WORKERS,
  cpus: (await import('node:os')).cpus().length,
  results,
};
if (opts.out) writeFileSync(resolve(ROOT, opts.out), `${JSON.stringify(report, null, 2)}\n`);
console.log(table(results));
