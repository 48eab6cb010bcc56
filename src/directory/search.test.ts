import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db } from '../platform/db.ts';
import { openStorage } from '../storage.ts';
import { BadRequestError } from '../platform/errors.ts';
import { demoListing, loadDemoDirectory } from './demo.ts';
import { createSearch, type Search, type SearchParams } from './search/search.ts';
import { trustOf } from './search/score.ts';
import { Snapshots } from './search/snapshot.ts';
import {
  listingColumns,
  positionsOfSeqs,
  positionsWithCodes,
  refreshVectors,
  similarities,
  vectorCount,
} from './vectors.ts';
import { embedOne } from '../embeddings/index.ts';
import { EMBEDDING_DIMENSIONS } from './store.ts';
import { insertListings } from './store.ts';
import { testDirectory } from '../../contract-tests/support/directory.ts';
import { haversineKm } from './geo.ts';

const NOW = new Date('2026-11-20T10:00:00Z'); // a Friday
const opts = { baseUrl: 'https://directory.test' };
let db: Db;
let directory: Search;

beforeAll(async () => {
  db = await testDirectory(2000);
  directory = createSearch(db);
});
afterAll(async () => {
  await db.close();
});

const search = (params: SearchParams, now = NOW) => directory.search(params, now, opts);
const primary = (hit: { listing: { activities: { code: string; primary: boolean }[] } }) =>
  hit.listing.activities.find((a) => a.primary)?.code ?? '';

describe('relevance', () => {
  it.each([
    ['my kitchen pipe is leaking', '43.22'],
    ['Wasserrohrbruch, der Wasserhahn tropft', '43.22'],
    ['fuite sous l’évier', '43.22'],
    ['the lights keep flickering', '43.21'],
    ['le luci sfarfallano', '43.21'],
    ['toothache', '86.23'],
    ['dolor de muelas', '86.23'],
    ['ból zęba', '86.23'],
  ])('semantic and hybrid: "%s" finds %s first', async (q, code) => {
    for (const mode of ['semantic', 'hybrid'] as const) {
      const page = await search({ q, mode, limit: 5 });
      expect(page.mode).toBe(mode);
      expect(page.data.length).toBe(5);
      expect(page.data.map(primary).every((c) => c === code)).toBe(true);
      expect(page.data[0]!.signals.semantic_similarity).toBeGreaterThan(0.4);
    }
  });

  it('keyword: case, accents and stemming in several languages', async () => {
    const cases: [string, string][] = [
      ['ZAHNÄRZTE', '86.23'], // German plural, upper case, umlaut
      ['zahnarzte', '86.23'],
      ['boulangeries', '10.71|47.24'], // French plural
      ['BOULANGERIE', '10.71|47.24'],
      ['panaderías', '10.71|47.24'], // Spanish plural, accent
      ['idraulici', '43.22'], // Italian plural
      ['loodgieters', '43.22'], // Dutch plural
      ['hydraulik', '43.22'], // Polish, exact word
      ['plumbers', '43.22'], // English, via the activities' trade words
    ];
    for (const [q, codes] of cases) {
      const page = await search({ q, mode: 'keyword', limit: 10 });
      expect(page.data.length, q).toBeGreaterThan(0);
      for (const hit of page.data) {
        expect(
          hit.listing.activities.some((a) => codes.split('|').includes(a.code)),
          `${q}: ${hit.listing.name}`,
        ).toBe(true);
        expect(hit.signals.text_relevance).toBeGreaterThan(0);
        expect(hit.signals.semantic_similarity).toBeNull();
      }
    }
  });

  it('keyword finds a listing by its name', async () => {
    const target = demoListing('test', 7);
    const page = await search({ q: target.name, mode: 'keyword', limit: 100 });
    expect(page.data.map((h) => h.listing.id)).toContain(target.id);
  });

  it('scores are ordered, highest first', async () => {
    const page = await search({ q: 'electrician', limit: 50 });
    expect(page.data.length).toBeGreaterThan(10);
    const scores = page.data.map((h) => h.score);
    expect(new Set(scores).size).toBeGreaterThan(1); // equal scores would be in any order
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('scores are within 0-1', async () => {
    const page = await search({ q: 'electrician', limit: 50 });
    expect(page.data.length).toBeGreaterThan(10);
    for (const hit of page.data) expect(hit.score >= 0 && hit.score <= 1, String(hit.score)).toBe(true);
  });

  it('a keyword score is 70 % text relevance and 30 % trust', async () => {
    const page = await search({ q: 'electrician', mode: 'keyword', limit: 50 });
    expect(page.data.length).toBeGreaterThan(10);
    for (const { score, signals: s } of page.data) {
      const trust = trustOf(s.bayesian_rating, s.review_count, s.claimed, s.response_time_median_minutes);
      expect(score).toBeCloseTo(0.7 * s.text_relevance! + 0.3 * trust, 3);
    }
  });

  it('a listing without reviews is rated at the prior, not at 0', async () => {
    const page = await search({ country: 'DE', limit: 100 });
    const unreviewed = page.data.filter((h) => h.listing.review_count === 0);
    expect(unreviewed.length).toBeGreaterThan(0);
    for (const hit of unreviewed) expect(hit.signals.bayesian_rating).toBeGreaterThan(3.5);
  });

  it('without q, hits are ordered by trust alone', async () => {
    const page = await search({ country: 'DE', limit: 10 });
    expect(
      page.data.every((h) => h.signals.text_relevance === null && h.signals.semantic_similarity === null),
    ).toBe(true);
    // the most trusted have many reviews and high adjusted ratings
    expect(page.data[0]!.signals.bayesian_rating).toBeGreaterThan(4);
  });
});

describe('filters', () => {
  it('activity matches the code and every code below it', async () => {
    for (const activity of ['43', '43.2', '43.22']) {
      const page = await search({ activity, limit: 100 });
      expect(page.data.length).toBeGreaterThan(0);
      for (const hit of page.data)
        expect(hit.listing.activities.some((a) => a.code.startsWith(activity))).toBe(true);
    }
    const division = await search({ activity: '43', limit: 100 });
    expect(
      new Set(division.data.flatMap((h) => h.listing.activities.map((a) => a.code))).size,
    ).toBeGreaterThan(3);
  });

  it('country, claimed, min_rating', async () => {
    const page = await search({ country: 'FR', claimed: true, min_rating: 4.5, limit: 100 });
    expect(page.data.length).toBeGreaterThan(0);
    for (const h of page.data) {
      expect(h.listing.address.country).toBe('FR');
      expect(h.listing.claimed).toBe(true);
      expect(h.listing.rating).toBeGreaterThanOrEqual(4.5);
      expect(h.listing.photos.length).toBeGreaterThan(0);
    }
    const unclaimed = await search({ claimed: false, limit: 100 });
    expect(unclaimed.data.every((h) => !h.listing.claimed && h.listing.photos.length === 0)).toBe(true);
  });

  it('city is accent- and case-insensitive', async () => {
    const { data } = await search({ country: 'DE', limit: 100 });
    const accented = data.map((h) => h.listing.address.city).find((c) => /[äöüß]/i.test(c));
    expect(accented).toBeDefined();
    const plain = accented!.toUpperCase().normalize('NFD').replace(/\p{M}/gu, '').replace('ß', 'SS');
    const page = await search({ city: plain, limit: 100 });
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((h) => h.listing.address.city === accented)).toBe(true);
  });

  it('near + radius_km keeps listings within the radius and reports their distance', async () => {
    const center = '48.8566,2.3522'; // Paris
    const page = await search({ near: center, radius_km: 30, limit: 100 });
    expect(page.data.length).toBeGreaterThan(0);
    for (const h of page.data) {
      const d = haversineKm(48.8566, 2.3522, h.listing.geo.lat, h.listing.geo.lon);
      expect(d).toBeLessThanOrEqual(30);
      expect(h.signals.distance_km).toBeCloseTo(d, 1);
    }
  });

  it('open_now agrees with the hours module, in each listing’s zone, and leaves out unknown hours', async () => {
    for (const [open_now, at] of [
      [true, NOW],
      [false, NOW],
      [true, new Date('2026-12-25T10:00:00Z')],
      [true, new Date('2026-11-22T01:30:00Z')],
    ] as const) {
      const page = await search({ open_now, limit: 100 }, at);
      expect(page.data.length).toBeGreaterThan(0);
      for (const h of page.data) {
        expect(h.listing.opening_hours).not.toBeNull();
        expect(h.listing.opening_hours!.open_now).toBe(open_now);
      }
    }
    // on Christmas Day, holiday closures apply
    const christmas = await search(
      { open_now: true, country: 'DE', limit: 100 },
      new Date('2026-12-25T10:00:00Z'),
    );
    for (const h of christmas.data)
      expect(h.listing.opening_hours!.periods).toEqual([{ open: { day: 0, time: '0000' }, close: null }]);
  });

  it('rejects a call without q and filters, and radius_km without near', async () => {
    await expect(search({})).rejects.toMatchObject({ status: 400, code: 'missing_query' });
    await expect(search({ q: 'x', radius_km: 5 })).rejects.toMatchObject({
      status: 400,
      code: 'radius_without_near',
    });
  });
});

describe('paging', () => {
  it('walks every hit once, with no duplicate and no gap, while listings are added', async () => {
    const params: SearchParams = { q: 'repair', mode: 'hybrid', limit: 7 };
    const expected = (await search({ ...params, limit: 100 })).data.map((h) => h.listing.id);
    let full: string[] = [];
    // collect the whole ranking first, in pages of 100
    let page = await search({ ...params, limit: 100 });
    full = page.data.map((h) => h.listing.id);
    while (page.next_cursor) {
      page = await search({ ...params, limit: 100, cursor: page.next_cursor });
      full.push(...page.data.map((h) => h.listing.id));
    }
    expect(full.slice(0, expected.length)).toEqual(expected);
    expect(full.length).toBeGreaterThan(30);

    const seen: string[] = [];
    page = await search(params);
    seen.push(...page.data.map((h) => h.listing.id));
    let added = 0;
    while (page.next_cursor) {
      // new listings that would rank anywhere (including first) arrive during the walk
      await db.transaction((tx) =>
        insertListings(tx, [demoListing('during-walk', added), demoListing('during-walk', added + 1)]),
      );
      added += 2;
      page = await search({ ...params, cursor: page.next_cursor });
      seen.push(...page.data.map((h) => h.listing.id));
    }
    expect(added).toBeGreaterThan(2);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(full);
    // a new query sees the new listings
    const after = await search({ q: 'repair', mode: 'keyword', limit: 100 });
    expect(after.data.length).toBeGreaterThan(0);
  });

  it('serves a rendered page again only while every listing on it keeps its opening state', async () => {
    const params: SearchParams = { q: 'bakery', mode: 'keyword', limit: 20 };
    const first = await search(params);
    expect(await search(params)).toBe(first); // the same object: the route sends its kept JSON
    let changed = 0;
    let previous = JSON.stringify(first);
    // every 20 minutes over two days, against a page rendered fresh (another base URL)
    for (let i = 1; i <= 144; i++) {
      const now = new Date(NOW.getTime() + i * 20 * 60_000);
      const page = JSON.stringify(await search(params, now));
      const fresh = JSON.stringify(
        await directory.search(params, now, { baseUrl: `https://fresh-${i}.test` }),
      ).replaceAll(`https://fresh-${i}.test`, opts.baseUrl);
      expect(page, now.toISOString()).toBe(fresh);
      if (page !== previous) changed++;
      previous = page;
    }
    expect(changed).toBeGreaterThan(3); // bakeries open and close in two days
  });

  it('a bad cursor, or one from another query, is a 400 invalid_cursor', async () => {
    await expect(search({ q: 'bakery', cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(BadRequestError);
    await expect(search({ q: 'bakery', cursor: 'not-a-cursor' })).rejects.toMatchObject({
      code: 'invalid_cursor',
    });
    const first = await search({ q: 'bakery', limit: 2 });
    expect(first.next_cursor).not.toBeNull();
    await expect(search({ q: 'dentist', cursor: first.next_cursor! })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
  });
});

describe('semantic candidates', () => {
  it('the candidates of a query hold what comparing with every listing finds (recall >= 0.98)', async () => {
    await refreshVectors(db);
    const queries = [
      'my kitchen pipe is leaking',
      'the lights keep flickering',
      'toothache',
      'ból zęba',
      'fresh bread in the morning',
      'I need a haircut',
      'help with my tax return',
      'the heating is broken',
      'repair',
      demoListing('test', 7).name, // no concept: candidates by its words
    ];
    for (const q of queries) {
      const vector = embedOne(q, EMBEDDING_DIMENSIONS);
      const pruned = await directory.semanticSet(q, vector, Number.MAX_SAFE_INTEGER);
      const all = similarities(db, vector, Number.MAX_SAFE_INTEGER);
      expect(all.seqs.length, q).toBeGreaterThan(0);
      const found = new Set(pruned.seqs);
      const kept = all.seqs.filter((s) => found.has(s)).length;
      expect(kept / all.seqs.length, q).toBeGreaterThanOrEqual(0.98);
      // the best ten are the same, with the same similarities
      const top = (x: { seqs: Float64Array; sims: Float64Array }) =>
        Array.from(x.seqs)
          .map((seq, i) => [x.sims[i] ?? 0, seq] as const)
          .sort((a, b) => b[0] - a[0] || a[1] - b[1])
          .slice(0, 10);
      expect(top(pruned), q).toEqual(top(all));
    }
  });

  it("a geo search's candidates are those within its circle, kept against the best of them", async () => {
    await refreshVectors(db);
    const cols = listingColumns(db);
    const circle = { lat: 52.52, lon: 13.405, radius: 400 };
    for (const q of ['my kitchen pipe is leaking', 'toothache', 'fresh bread in the morning']) {
      const vector = embedOne(q, EMBEDDING_DIMENSIONS);
      const near = await directory.semanticSet(q, vector, Number.MAX_SAFE_INTEGER, undefined, circle);
      const everywhere = await directory.semanticSet(q, vector, Number.MAX_SAFE_INTEGER);
      const inCircle = (at: number) =>
        haversineKm(circle.lat, circle.lon, cols.lats[at]!, cols.lons[at]!) <= circle.radius;
      expect(near.ats.length, q).toBeGreaterThan(0);
      expect(Array.from(near.ats).every(inCircle), q).toBe(true);
      // the cut is relative to the best nearby, never above the one of the whole directory
      const best = Math.max(...near.sims);
      expect(Math.min(...near.sims), q).toBeGreaterThanOrEqual(Math.max(0.2, 0.7 * best) - 1e-6);
      const kept = new Set(near.ats);
      expect(
        Array.from(everywhere.ats)
          .filter(inCircle)
          .every((at) => kept.has(at)),
        q,
      ).toBe(true);
    }
  });

  it('concurrent refreshes load every embedding once', async () => {
    // its own database (testDirectory on PostgreSQL would empty the one the other tests use)
    const fresh = await openStorage({ databaseUrl: undefined, dataDir: 'memory://' });
    await loadDemoDirectory(fresh, { count: 300, seed: 'refresh' });
    try {
      await Promise.all([refreshVectors(fresh), refreshVectors(fresh), refreshVectors(fresh)]);
      const [row] = await fresh.query<{ n: number }>('select count(*)::int as n from listings');
      expect(vectorCount(fresh)).toBe(row?.n);
    } finally {
      await fresh.close();
    }
  });
});

describe('semantic ranking in memory', () => {
  const walk = async (params: SearchParams) => {
    const hits: { id: string; score: number; claimed: boolean }[] = [];
    let page = await search({ ...params, limit: 100 });
    for (;;) {
      hits.push(...page.data.map((h) => ({ id: h.listing.id, score: h.score, claimed: h.listing.claimed })));
      if (!page.next_cursor) return hits;
      page = await search({ ...params, limit: 100, cursor: page.next_cursor });
    }
  };

  it('ranks an unfiltered semantic query exactly as the SQL path does', async () => {
    for (const q of ['toothache', 'my kitchen pipe is leaking', 'repair']) {
      const memory = await walk({ q, mode: 'semantic' }); // no filter: ranked from the vector index
      const sql = await walk({ q, mode: 'semantic', claimed: true }); // a filter: ranked in SQL
      expect(memory.length, q).toBeGreaterThan(sql.length);
      expect(new Set(memory.map((h) => h.id)).size).toBe(memory.length);
      expect(
        memory.filter((h) => h.claimed).map(({ id, score }) => ({ id, score })),
        q,
      ).toEqual(sql.map(({ id, score }) => ({ id, score })));
    }
  });
});

describe('the snapshot of a search', () => {
  it('comes from a query begun after the search arrived; searches waiting together share one', async () => {
    // a database whose max(seq) query reads the state when it begins, and answers when told
    let committed = 1;
    const answers: (() => void)[] = [];
    const fake = {
      query: () => {
        const s = committed;
        return new Promise((resolve) => answers.push(() => resolve([{ s }])));
      },
    } as unknown as Db;
    const snapshots = new Snapshots(fake);
    const latestSeq = () => snapshots.latestSeq();
    const first = latestSeq(); // query 1 begins: it reads seq 1
    committed = 2; // a listing commits while it runs
    const second = latestSeq(); // arrived after the commit: query 1's answer is too old
    const third = latestSeq();
    expect(answers).toHaveLength(1);
    answers.shift()!();
    expect(await first).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect(answers).toHaveLength(1); // one query for both waiting searches
    answers.shift()!();
    expect(await second).toBe(2);
    expect(await third).toBe(2);
    // nothing running: the next search starts its own query at once
    const fourth = latestSeq();
    expect(answers).toHaveLength(1);
    answers.shift()!();
    expect(await fourth).toBe(2);
  });
});

describe('candidates by activity', () => {
  it('are the listings under any of the codes, each once, ascending, as SQL selects them', async () => {
    const [{ s }] = (await db.query<{ s: number }>('select max(seq)::int as s from listings')) as [
      { s: number },
    ];
    await refreshVectors(db, s);
    for (const codes of [
      ['43.22'],
      ['43.22', '43.21', '43.2', '56.10'],
      ['56.10', '56.10', '10.71'],
      ['99.99'],
    ]) {
      const rows = await db.query<{ seq: number }>(
        'select seq from listings where activity_path && $1::text[] and seq <= $2 order by seq',
        [codes, s - 5],
      );
      const expected = positionsOfSeqs(
        db,
        rows.map((r) => Number(r.seq)),
        s - 5,
      );
      expect([...positionsWithCodes(db, codes, s - 5)], codes.join(',')).toEqual([...expected]);
      expect(expected.length > 0 || codes[0] === '99.99').toBe(true);
    }
  });
});
