// CPU time of one search in process, by mode, with the caches off: the figure a refactor of
// src/directory/search/ must not raise. Runs on the PGlite data bench/directory.ts imported.
//
//   node bench/search-cpu.ts [--data .tmp/bench/pglite-50000] [--rounds 5]
//
// CPU time (process.cpuUsage), not wall time, so other work on the machine moves it less.
import { parseArgs } from 'node:util';
import { createSearch, type SearchParams } from '../src/directory/search/search.ts';
import { openStorage } from '../src/storage.ts';

const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: '.tmp/bench/pglite-50000' },
    rounds: { type: 'string', default: '5' },
  },
});
const db = await openStorage({ databaseUrl: undefined, dataDir: opts.data });
const search = createSearch(db, { cache: false });
await search.prepare();
const now = new Date('2026-11-20T10:00:00Z');
const QUERIES = [
  'plumber',
  'Klempner',
  'restaurant',
  'boulangerie',
  'hair salon',
  'car repair',
  'my kitchen pipe is leaking',
  'Zahnarzt',
  'fresh bread in the morning',
  'idraulico',
];
const result: Record<string, number> = {};
for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
  for (const geo of [false, true]) {
    const params: SearchParams[] = QUERIES.map((q) => ({
      q,
      mode,
      limit: 20,
      ...(geo ? { near: '52.52,13.405', radius_km: 25 } : {}),
    }));
    for (const p of params) await search.search(p, now, { baseUrl: 'https://x.test' }); // warm-up
    const start = process.cpuUsage();
    const rounds = Number(opts.rounds);
    for (let r = 0; r < rounds; r++)
      for (const p of params) await search.search(p, now, { baseUrl: 'https://x.test' });
    const used = process.cpuUsage(start);
    result[`${mode}${geo ? ' + geo' : ''}`] =
      Math.round((used.user + used.system) / 10 / (rounds * params.length)) / 100;
  }
}
console.log('CPU ms per search:', JSON.stringify(result));
await db.close();
