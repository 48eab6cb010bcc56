// Relevance of search on what people type (issue 28): the judged query set of
// bench/relevance/queries.ts run against our search (in process, as the service runs it) and
// against MiniSearch and Orama indexing the same listings' text (name, legal name, activities,
// description, city, district), with their fuzzy and prefix search on and, where a query names
// a place, that place as a geo filter (the same circle the judge uses). Not part of `npm test`.
//
//   npm run bench:search-relevance -- [--listings 20000] [--seed eurus-demo] [--out FILE.json]
//
// A hit is relevant when one of its activities starts with one of the query's codes and, for a
// query that names a place, it lies within the judge's radius of that municipality (20 km for a
// million people or more, 15 for 300,000, else 10). A query passes (success@5) when its top 5
// hold min(3, available) relevant listings, "available" being every relevant listing of the
// directory. nDCG@10 with binary gains. The directory is the demo's (PGlite, kept in .tmp/bench).
// A `city=` query is judged by the listing's address being in the municipality meant (the
// demo's data, not our output); MiniSearch and Orama filter their city field on the value as
// sent (accent- and case-folded), which is what such an engine offers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { create, insertMultiple, search as oramaSearch } from '@orama/orama';
import MiniSearch from 'minisearch';
import { cityNamed } from '../src/directory/data/place-names.ts';
import { foldText } from '../src/embeddings/fold.ts';
import { loadDemoDirectory } from '../src/directory/demo.ts';
import { haversineKm } from '../src/directory/geo.ts';
import { createSearch, type SearchParams } from '../src/directory/search/search.ts';
import type { ListingRecord } from '../src/directory/store.ts';
import { openStorage } from '../src/storage.ts';
import { type JudgedQuery, type Kind, QUERIES } from './relevance/queries.ts';

const { values: opts } = parseArgs({
  options: {
    listings: { type: 'string', default: '20000' },
    seed: { type: 'string', default: 'eurus-demo' },
    dir: { type: 'string', default: '.tmp/bench' },
    out: { type: 'string' },
  },
});
const COUNT = Number(opts.listings);
const dataDir = `${opts.dir}/relevance-${opts.seed}-${COUNT}`;
mkdirSync(opts.dir, { recursive: true });
const started = performance.now();
const db = await openStorage({ databaseUrl: undefined, dataDir });
await loadDemoDirectory(db, { count: COUNT, seed: opts.seed });
const listings = (
  await db.query<{ profile: ListingRecord }>('select profile from listings order by seq')
).map((r) => r.profile);
console.error(`${listings.length} listings ready in ${((performance.now() - started) / 1000).toFixed(0)} s`);

// --- the judge ------------------------------------------------------------------------------
interface Circle {
  lat: number;
  lon: number;
  radius: number;
}
function circleOf(query: JudgedQuery): Circle | undefined {
  if (!query.place) return undefined;
  const [name, country] = query.place;
  const place = cityNamed(name, country)?.place;
  if (!place) throw new Error(`the judge does not know ${name} (${country})`);
  const radius = place.population >= 1_000_000 ? 20 : place.population >= 300_000 ? 15 : 10;
  return { lat: place.lat, lon: place.lon, radius };
}
/** For `city=`: the municipality's local name (folded), which the listing's address must carry. */
const townOf = (query: JudgedQuery) => (query.city && query.place ? foldText(query.place[0]) : undefined);
const relevantTo = (query: JudgedQuery, circle: Circle | undefined) => {
  const town = townOf(query);
  return (l: ListingRecord) =>
    l.activities.some((a) => query.activity.some((code) => a.code.startsWith(code))) &&
    (town !== undefined
      ? foldText(l.address.city) === town && l.address.country === query.place![1]
      : !circle || haversineKm(circle.lat, circle.lon, l.geo.lat, l.geo.lon) <= circle.radius);
};

interface Judged {
  success: boolean;
  ndcg: number;
  zero: boolean;
}
function judge(hits: ListingRecord[], isRelevant: (l: ListingRecord) => boolean, available: number): Judged {
  const gains = hits.slice(0, 10).map((h) => (isRelevant(h) ? 1 : 0));
  const top5 = gains.slice(0, 5).reduce((a: number, b) => a + b, 0);
  const dcg = gains.reduce((sum: number, g, i) => sum + g / Math.log2(i + 2), 0);
  let ideal = 0;
  for (let i = 0; i < Math.min(10, available); i++) ideal += 1 / Math.log2(i + 2);
  return {
    success: top5 >= Math.min(3, available),
    ndcg: ideal > 0 ? dcg / ideal : 0,
    zero: hits.length === 0,
  };
}

// --- the engines ----------------------------------------------------------------------------
const byId = new Map(listings.map((l) => [l.id, l]));
const textOf = (l: ListingRecord) =>
  [
    l.name,
    l.legal_name ?? '',
    ...l.activities.map((a) => a.name),
    l.description,
    l.address.city,
    l.address.district ?? '',
  ].join(' ');

const ours = createSearch(db, { cache: false });
await ours.prepare();
const NOW = new Date('2026-11-20T10:00:00Z');
async function runOurs(query: JudgedQuery, circle: Circle | undefined, mode: 'hybrid' | 'keyword') {
  const params: SearchParams = { q: query.q, mode, limit: 10 };
  if (query.city) params.city = query.city;
  if (query.near && circle)
    Object.assign(params, { near: `${circle.lat},${circle.lon}`, radius_km: circle.radius });
  const page = await ours.search(params, NOW, { baseUrl: 'https://bench.invalid' });
  return page.data.map((h) => byId.get(h.listing.id)!);
}

const mini = new MiniSearch<{ id: string; text: string; lat: number; lon: number; city: string }>({
  fields: ['text'],
  storeFields: ['lat', 'lon', 'city'],
});
mini.addAll(
  listings.map((l) => ({
    id: l.id,
    text: textOf(l),
    lat: l.geo.lat,
    lon: l.geo.lon,
    city: foldText(l.address.city),
  })),
);
function runMini(query: JudgedQuery, circle: Circle | undefined) {
  const city = query.city !== undefined ? foldText(query.city) : undefined;
  return mini
    .search(query.q, {
      fuzzy: 0.2,
      prefix: true,
      ...(city !== undefined
        ? { filter: (r: { [key: string]: unknown }) => r['city'] === city }
        : circle
          ? {
              filter: (r: { [key: string]: unknown }) =>
                haversineKm(circle.lat, circle.lon, Number(r['lat']), Number(r['lon'])) <= circle.radius,
            }
          : {}),
    })
    .slice(0, 10)
    .map((r) => byId.get(String(r.id))!);
}

const orama = create({
  schema: { id: 'string', text: 'string', city: 'enum', location: 'geopoint' } as const,
});
await insertMultiple(
  orama,
  listings.map((l) => ({
    id: l.id,
    text: textOf(l),
    city: foldText(l.address.city),
    location: { lat: l.geo.lat, lon: l.geo.lon },
  })),
  1000,
);
async function runOrama(query: JudgedQuery, circle: Circle | undefined) {
  const result = await oramaSearch(orama, {
    term: query.q,
    properties: ['text'],
    tolerance: 1,
    limit: 10,
    ...(query.city !== undefined
      ? { where: { city: { eq: foldText(query.city) } } }
      : circle
        ? {
            where: {
              location: {
                radius: {
                  coordinates: { lat: circle.lat, lon: circle.lon },
                  unit: 'km',
                  value: circle.radius,
                  inside: true,
                },
              },
            },
          }
        : {}),
  });
  return result.hits.map((h) => byId.get(String(h.document.id))!);
}

// --- the run --------------------------------------------------------------------------------
const ENGINES = ['ours (hybrid)', 'ours (keyword)', 'MiniSearch', 'Orama'] as const;
type Engine = (typeof ENGINES)[number];
const results: { query: JudgedQuery; available: number; by: Record<Engine, Judged> }[] = [];
for (const query of QUERIES) {
  const circle = circleOf(query);
  const isRelevant = relevantTo(query, circle);
  const available = listings.filter(isRelevant).length;
  if (available === 0) {
    console.error(`skipped (nothing relevant in the directory): ${query.q}`);
    continue;
  }
  const by = {
    'ours (hybrid)': judge(await runOurs(query, circle, 'hybrid'), isRelevant, available),
    'ours (keyword)': judge(await runOurs(query, circle, 'keyword'), isRelevant, available),
    MiniSearch: judge(runMini(query, circle), isRelevant, available),
    Orama: judge(await runOrama(query, circle), isRelevant, available),
  };
  results.push({ query, available, by });
}

const KINDS: Kind[] = ['place_in_q', 'city_other_language', 'city_big', 'typo', 'language_near'];
const rows: string[] = [];
const pct = (x: number) => `${(100 * x).toFixed(0)} %`;
rows.push(`| kind | queries | ${ENGINES.map((e) => `${e} success@5 / nDCG@10`).join(' | ')} |`);
rows.push(`| --- | ---: | ${ENGINES.map(() => '---:').join(' | ')} |`);
const summary: Record<string, Record<Engine, { success: number; ndcg: number; zero: number }>> = {};
for (const kind of [...KINDS, 'all'] as const) {
  const set = results.filter((r) => kind === 'all' || r.query.kind === kind);
  if (set.length === 0) continue;
  summary[kind] = {} as Record<Engine, { success: number; ndcg: number; zero: number }>;
  const cells = ENGINES.map((e) => {
    const success = set.filter((r) => r.by[e].success).length;
    const ndcg = set.reduce((s, r) => s + r.by[e].ndcg, 0) / set.length;
    const zero = set.filter((r) => r.by[e].zero).length / set.length;
    summary[kind]![e] = { success, ndcg, zero };
    return `${success} / ${ndcg.toFixed(2)}`;
  });
  rows.push(`| ${kind} | ${set.length} | ${cells.join(' | ')} |`);
}
rows.push(
  `| zero results | ${results.length} | ${ENGINES.map((e) => pct(summary.all![e].zero)).join(' | ')} |`,
);
console.log(rows.join('\n'));
const failing = results
  .filter((r) => !r.by['ours (hybrid)'].success)
  .map(
    (r) =>
      `${r.query.kind}: ${r.query.q}${r.query.city ? ` (city=${r.query.city})` : ''} [available ${r.available}]`,
  );
console.log(`\nours (hybrid) fails: ${failing.length}\n${failing.join('\n')}`);
if (opts.out) {
  writeFileSync(
    opts.out,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        load: loadavg(),
        listings: listings.length,
        seed: opts.seed,
        summary,
        results,
      },
      null,
      1,
    ),
  );
}
await db.close();
