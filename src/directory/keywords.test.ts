import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../platform/db.ts';
import { addPostings, inlineRun, KeywordIndex, weightCode } from './keywords/postings.ts';
import { coverDensity, CoverRanker, keywordRanks, lexemeGroups, plainLexemes } from './keywords/ranker.ts';
import { TopK } from './keywords/top-k.ts';
import { mulberry32 } from '../platform/prng.ts';
import { round6 } from './search/score.ts';
import { createSearch, type Search, type SearchParams, withoutElisions } from './search/search.ts';
import { demoListing } from './demo.ts';
import { insertListings } from './store.ts';
import { testDirectory } from '../../contract-tests/support/directory.ts';

const NOW = new Date('2026-11-20T10:00:00Z');
const opts = { baseUrl: 'https://directory.test' };
let db: Db;
/** Without caches: both paths rank every time. */
let inMemory: Search;
let inSql: Search;

beforeAll(async () => {
  db = await testDirectory(3000, 'keyword-index');
  inMemory = createSearch(db, { cache: false });
  inSql = createSearch(db, { cache: false, memoryRanking: false });
});
afterAll(async () => {
  await db.close();
});

/** Every page of a query, walked with its cursors, ranked in memory or by SQL (or by `search`). */
async function walk(params: SearchParams, memory: boolean | Search) {
  const search = memory === true ? inMemory : memory === false ? inSql : memory;
  const hits = [];
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) {
    const page = await search.search({ ...params, ...(cursor ? { cursor } : {}) }, NOW, opts);
    hits.push(...page.data.map((h) => ({ id: h.listing.id, score: h.score, signals: h.signals })));
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return hits;
}

const QUERIES = [
  'Klempner',
  'plumber',
  'restaurant',
  'boulangerie',
  'Zahnarzt',
  'hotel',
  'avocat',
  'Friseur',
  'panaderías',
  'idraulici',
  'the', // a stop word in some configurations
  'Berlin',
  // several words: matches from the postings, cover density from SQL for those rows
  'hair salon',
  'car repair',
  'my kitchen pipe is leaking',
  'Wasserrohrbruch, der Wasserhahn tropft',
  'dolor de muelas',
  'fuite sous l’évier', // an elision: no phrase, so ranked in memory too
];
const FILTERS: Omit<SearchParams, 'q'>[] = [
  {},
  { country: 'DE' },
  { claimed: true },
  { min_rating: 4.2 },
  { activity: '43' },
  { near: '52.52,13.405', radius_km: 300 },
  { near: '48.8566,2.3522', radius_km: 500, claimed: false },
];

/** The matches of a disjunction of conjunctions, by brute force over every listing's lexemes. */
function matchesOf(index: KeywordIndex, groups: string[][], upTo: number): number[] {
  const out: number[] = [];
  for (let at = 0; at < upTo; at++) {
    const has = (lexeme: string) => {
      const list = index.postings.get(lexeme);
      if (!list) return false;
      for (let i = 0; i < list.length; i += 2) if (list.data[i] === at) return true;
      return false;
    };
    if (groups.some((group) => group.every(has))) out.push(at);
  }
  return out;
}

describe("ranking in memory gives the SQL path's pages", () => {
  it.each(QUERIES)('keyword, hybrid and semantic: "%s", every filter, every page', async (q) => {
    for (const mode of ['keyword', 'hybrid', 'semantic'] as const) {
      for (const filter of FILTERS) {
        const params: SearchParams = { q, mode, limit: 37, ...filter };
        const sql = await walk(params, false);
        const memory = await walk(params, true);
        expect(memory, `${mode} ${JSON.stringify(filter)}`).toEqual(sql);
      }
    }
  });

  it("hybrid from each side's best few: the same pages at every depth, first tried or doubled", async () => {
    for (const depth of [1, 5, 40]) {
      const shallow = createSearch(db, { cache: false, fusionDepth: depth });
      for (const q of ['plumber', 'car repair', 'restaurant', 'my kitchen pipe is leaking']) {
        for (const filter of [FILTERS[0]!, FILTERS[2]!, FILTERS[5]!]) {
          const params: SearchParams = { q, mode: 'hybrid', limit: 10, ...filter };
          const sql = await walk(params, false);
          expect(await walk(params, shallow), `${depth} ${q} ${JSON.stringify(filter)}`).toEqual(sql);
        }
      }
    }
  });

  it('gives way between phases, and searches interleaved there rank as alone', async () => {
    const params: SearchParams[] = [
      { q: 'car repair', mode: 'hybrid', limit: 15 },
      { q: 'hair salon', mode: 'keyword', limit: 15, claimed: true },
      { q: 'plumber', mode: 'hybrid', limit: 15, country: 'DE' },
      { q: 'my kitchen pipe is leaking', mode: 'semantic', limit: 15 },
      { q: 'dolor de muelas', mode: 'hybrid', limit: 15, near: '52.52,13.405', radius_km: 300 },
    ];
    const alone = [];
    for (const p of params) alone.push(await walk(p, false));
    const yielding = createSearch(db, { cache: false, sliceMs: 0 }); // give way at every chance
    const before = yielding.giveWayStats.pauses;
    // all at once: each gives way while the others rank, with the scratch they share
    const together = await Promise.all(params.map((p) => walk(p, yielding)));
    expect(together).toEqual(alone);
    expect(yielding.giveWayStats.pauses - before).toBeGreaterThan(params.length);
  });

  it('still ranks as SQL does after listings are added (ids in order, trust by position extended)', async () => {
    const params: SearchParams[] = [
      { q: 'plumber', mode: 'hybrid', limit: 23 },
      { q: 'car repair', mode: 'hybrid', limit: 23, country: 'DE' },
      { q: 'my kitchen pipe is leaking', mode: 'semantic', limit: 23 },
    ];
    for (const p of params) await walk(p, true); // build what memory keeps, before the growth
    await db.transaction((tx) =>
      insertListings(
        tx,
        Array.from({ length: 60 }, (_, i) => demoListing('grown', i)),
      ),
    );
    for (const p of params) expect(await walk(p, true), JSON.stringify(p)).toEqual(await walk(p, false));
  });

  it('falls back to SQL for phrases, negation and open_now', async () => {
    for (const params of [
      { q: '"hair salon"', mode: 'keyword' as const },
      { q: 'plumber -Berlin', mode: 'hybrid' as const },
      { q: 'plumber', mode: 'keyword' as const, open_now: true },
    ]) {
      expect(await walk({ ...params, limit: 50 }, true)).toEqual(await walk({ ...params, limit: 50 }, false));
    }
  });
});

describe('keyword index pieces', () => {
  it('parses tsvector text: weights, escapes, positions', () => {
    const postings = new KeywordIndex();
    addPostings(postings, 0, `'a':1A,5B,9 'it''s':2C 'back\\\\slash':3 'bare'`);
    addPostings(postings, 1, `'a':4`);
    const ranksOf = (lexemes: string[], upTo: number) => {
      const { ats, ranks } = keywordRanks(postings, lexemes, upTo);
      return new Map([...ats].map((at, i) => [at, ranks[i]!]));
    };
    const ranks = ranksOf(['a'], 2);
    // 1 + 0.4 + 0.1 = 1.5 -> 1.5 / 2.5; 0.1 -> 0.1 / 1.1, as float4
    const w = 1 + 1 / (1 / Math.fround(0.4)) + 1 / (1 / Math.fround(0.1));
    expect(ranks.get(0)).toBe(Math.fround(w / (w + 1)));
    expect(ranks.get(1)).toBeCloseTo(0.1 / 1.1, 6);
    expect(ranksOf(['a'], 1).has(1)).toBe(false);
    expect(ranksOf(["it's"], 2).get(0)).toBeCloseTo(0.2 / 1.2, 6);
    expect(ranksOf(['back\\slash'], 2).get(0)).toBeCloseTo(0.1 / 1.1, 6);
    expect(ranksOf(['bare'], 2).get(0)).toBeCloseTo(0.1 / 1.1, 6);
    // several lexemes: each listing once, the weights of all its matching positions summed
    const both = ranksOf(['a', "it's", 'none'], 2);
    expect([...both.keys()].sort()).toEqual([0, 1]);
    const w2 = w + 1 / (1 / Math.fround(0.2));
    expect(both.get(0)).toBe(Math.fround(w2 / (w2 + 1)));
    expect(both.get(1)).toBe(ranks.get(1));
    expect(ranksOf(['a', "it's"], 2)).toEqual(both); // the scratch sums were cleared
  });

  it('takes only disjunctions of plain lexemes', () => {
    expect(plainLexemes([`'klempn'`, `'klempner'`])).toEqual(['klempn', 'klempner']);
    expect(plainLexemes([`'a' | 'b'`, `'a'`])).toEqual(['a', 'b']);
    expect(plainLexemes([`'it''s'`])).toEqual(["it's"]);
    expect(plainLexemes([`'hair' & 'salon'`])).toBeUndefined();
    expect(plainLexemes([`'a' <-> 'b'`])).toBeUndefined();
    expect(plainLexemes([`!'a'`])).toBeUndefined();
    expect(plainLexemes([`'a':*`])).toBeUndefined();
    expect(plainLexemes([])).toEqual([]);
  });

  it('matches conjunctions from the postings', () => {
    const postings = new KeywordIndex();
    addPostings(postings, 0, `'hair':1 'salon':2`);
    addPostings(postings, 1, `'hair':1`);
    addPostings(postings, 2, `'salon':1 'hair':3 'kapsalon':2`);
    addPostings(postings, 3, `'kapsalon':1`);
    expect(lexemeGroups([`'hair' & 'salon'`, `'kapsalon'`])).toEqual([['hair', 'salon'], ['kapsalon']]);
    expect(lexemeGroups([`'a' <-> 'b'`])).toBeUndefined();
    const walked = (groups: string[][], upTo: number) => [
      ...new CoverRanker(postings, groups).matches(upTo).ats,
    ];
    expect(walked([['hair', 'salon'], ['kapsalon']], 4)).toEqual([0, 2, 3]);
    expect(walked([['hair', 'salon']], 2)).toEqual([0]);
    expect(walked([['hair', 'nothing']], 4)).toEqual([]);
    // overlapping groups, merged: each listing once, ascending
    expect(walked([['kapsalon'], ['salon'], ['hair', 'salon'], ['hair']], 4)).toEqual([0, 1, 2, 3]);
    // one list far longer than the other (galloped, not merged), both ways round
    const skewed = new KeywordIndex();
    const rare = new Set([5, 72, 138, 201]);
    for (let at = 0; at < 400; at++) {
      const lexemes = [...(at % 2 === 0 ? [`'common':1`] : []), ...(rare.has(at) ? [`'rare':2`] : [])];
      if (lexemes.length > 0) addPostings(skewed, at, lexemes.join(' '));
    }
    for (const groups of [
      [['rare', 'common']],
      [['common', 'rare']],
      [
        ['rare', 'common'],
        ['common', 'rare', 'x'],
      ],
    ]) {
      expect([...new CoverRanker(skewed, groups).matches(400).ats]).toEqual([72, 138]);
    }
    expect([...new CoverRanker(skewed, [['rare', 'common']]).matches(100).ats]).toEqual([72]);
    // a lexeme no listing has leaves its group out, not the others
    expect(walked([['hair', 'nothing'], ['kapsalon']], 4)).toEqual([2, 3]);
    // one cover (1..2), no noise: 2 / (1 / 0.1 + 1 / 0.1) = 0.1; then 0.1 / 1.1
    expect(coverDensity(postings, [['hair', 'salon']], 0)).toBeCloseTo(0.1 / 1.1, 6);
    // the cover of 'salon':1 and 'hair':3 holds one noise word: 0.1 / 2
    expect(coverDensity(postings, [['hair', 'salon']], 2)).toBeCloseTo(0.05 / 1.05, 6);
  });

  it('bounds cover density from above without ranking', () => {
    const random = mulberry32(5);
    const postings = new KeywordIndex();
    const lexemes = ['a', 'b', 'c', 'd'];
    for (let at = 0; at < 400; at++) {
      const entries = lexemes.flatMap((lexeme) => {
        // one run in ten long and of one weight: more than 15 of a class, read from the pool
        const long = random() < 0.1;
        const n = long ? 16 + Math.floor(random() * 20) : Math.floor(random() * 4);
        const positions = [
          ...new Set(Array.from({ length: n }, () => 1 + Math.floor(random() * (long ? 200 : 30)))),
        ];
        if (positions.length === 0) return [];
        const weighted = positions
          .sort((x, y) => x - y)
          .map((p) => `${p}${long ? 'A' : 'ABCD'[Math.floor(random() * 4)]}`);
        return [`'${lexeme}':${weighted.join(',')}`];
      });
      addPostings(postings, at, entries.join(' '));
    }
    const groups = [
      ['a', 'b'],
      ['c', 'd', 'a'],
    ];
    const ranker = new CoverRanker(postings, groups);
    // more than 30 operands: the cover loop without bit masks, which must agree
    const wide = new CoverRanker(postings, [
      ...groups,
      ...Array.from({ length: 30 }, (_, i) => [`absent${i}`]),
    ]);
    let ranked = 0;
    const cover = new CoverRanker(postings, groups).matches(400);
    expect([...cover.ats]).toEqual(matchesOf(postings, groups, 400));
    for (const [i, at] of cover.ats.entries()) {
      const bound = ranker.bound(at);
      const rank = ranker.rank(at);
      // the walk's bound and rank, from the postings it found, are the lookups'
      expect(cover.bounds[i]).toBe(bound);
      expect(ranker.rankMatch(cover, i)).toBe(rank);
      expect(bound, `listing ${at}`).toBeGreaterThanOrEqual(rank);
      expect(rank).toBe(coverDensity(postings, groups, at));
      expect(wide.rank(at)).toBe(rank);
      ranked++;
    }
    expect(ranked).toBeGreaterThan(50);
    // one group of two (its own walk, which records both postings as it merges), both ways round
    for (const pair of [
      ['a', 'b'],
      ['c', 'a'],
    ]) {
      const one = new CoverRanker(postings, [pair]);
      const found = one.matches(400);
      expect([...found.ats]).toEqual(matchesOf(postings, [pair], 400));
      for (const [i, at] of found.ats.entries()) {
        expect(found.bounds[i]).toBe(one.bound(at));
        expect(one.rankMatch(found, i)).toBe(coverDensity(postings, [pair], at));
      }
    }
    // the bound is reached: a and b alternating side by side, all weight A (5 covers of 1)
    const tight = new KeywordIndex();
    addPostings(tight, 0, `'a':1A,3A,5A 'b':2A,4A,6A`);
    const two = new CoverRanker(tight, [['a', 'b']]);
    expect(two.rank(0)).toBe(Math.fround(5 / 6));
    expect(two.bound(0)).toBe(two.rank(0));
  });

  it('counts positions per weight class beside each posting, and reads the pool past 15', () => {
    expect(weightCode([(3 << 14) | 1, (2 << 14) | 2, 5])).toBe(0x1101);
    const sixteen = Array.from({ length: 16 }, (_, i) => (3 << 14) | (i + 1));
    expect(weightCode(sixteen)).toBe(0);
    const postings = new KeywordIndex();
    addPostings(postings, 0, `'a':${sixteen.map((p) => `${p & 0x3fff}A`).join(',')},17B`);
    addPostings(postings, 1, `'a':1A,2B,3C,4`);
    const { ats, ranks } = keywordRanks(postings, ['a'], 2);
    expect([...ats]).toEqual([0, 1]);
    const w = 16 + 1 / (1 / Math.fround(0.4));
    expect(ranks[0]).toBe(Math.fround(w / (w + 1)));
    const w1 = 1 + 1 / (1 / Math.fround(0.4)) + 1 / (1 / Math.fround(0.2)) + 1 / (1 / Math.fround(0.1));
    expect(ranks[1]).toBe(Math.fround(w1 / (w1 + 1)));
  });

  it('keeps runs of one or two positions below 8192 inline, and ranks them as from the pool', () => {
    const A = 3 << 14;
    const B = 2 << 14;
    for (const run of [[A | 1], [5], [A | 1, B | 7], [B | 8191, A | 8191], [1, 2]]) {
      expect(inlineRun(run)).toBeLessThan(0);
    }
    for (const run of [[], [A | 8192], [1, A | 9000], [1, 2, 3]]) expect(inlineRun(run)).toBeUndefined();
    const index = new KeywordIndex();
    // listing 0: both runs inline; 1: one inline, one in the pool (three entries); 2: past 8191
    addPostings(index, 0, `'a':3A,5B 'b':4`);
    addPostings(index, 1, `'a':2A 'b':1C,5,9B`);
    addPostings(index, 2, `'a':9000A,9001 'b':8999B`);
    const a = index.postings.get('a')!;
    const b = index.postings.get('b')!;
    expect(index.run(a, 0)).toEqual([A | 3, B | 5]);
    expect(index.run(b, 1)).toEqual([(1 << 14) | 1, 5, B | 9]);
    expect(index.run(a, 2)).toEqual([A | 9000, 9001]);
    expect([0, 1, 2].map((pair) => a.data[pair * 2 + 1]! < 0)).toEqual([true, true, false]);
    // the same ranks as a ranker that reads every run from the pool (brute force: cover density
    // over the listing's positions, computed here from the runs)
    const ranker = new CoverRanker(index, [['a', 'b']]);
    const pooled = new KeywordIndex();
    for (const [at, tsv] of [
      [0, `'a':3A,5B 'b':4`],
      [1, `'a':2A 'b':1C,5,9B`],
      [2, `'a':9000A,9001 'b':8999B`],
    ] as const) {
      addPostings(pooled, at, tsv);
      for (const list of pooled.postings.values()) {
        // move every inline run to the pool
        for (let pair = 0; pair < list.length / 2; pair++) {
          if (list.data[pair * 2 + 1]! < 0) list.data[pair * 2 + 1] = pooled.store(pooled.run(list, pair));
        }
      }
    }
    const reference = new CoverRanker(pooled, [['a', 'b']]);
    for (const at of [0, 1, 2]) {
      expect(ranker.rank(at)).toBe(reference.rank(at));
      expect(ranker.bound(at)).toBe(reference.bound(at));
    }
    // 'a' at 3 (A) and 5 (B), 'b' at 4 (D): two covers of two entries, no noise word
    const inv = (w: number) => 1 / Math.fround(w);
    const wdoc = 2 / (inv(1) + inv(0.1)) + 2 / (inv(0.1) + inv(0.4));
    expect(ranker.rank(0)).toBe(Math.fround(wdoc / (wdoc + 1)));
  });

  it('keeps the best k by score then id', () => {
    const top = new TopK<{ score: number; id: string }>(3);
    for (const [score, id] of [
      [0.5, 'b'],
      [0.9, 'z'],
      [0.5, 'a'],
      [0.1, 'c'],
      [0.5, 'c'],
      [0.9, 'y'],
    ] as const) {
      top.offer({ score, id });
    }
    expect(top.sorted().map((x) => x.id)).toEqual(['y', 'z', 'a']);
  });

  it('drops French and Italian elisions from keyword queries, nothing else', () => {
    expect(withoutElisions('fuite sous l’evier')).toBe('fuite sous evier');
    expect(withoutElisions("l'huile d'olive")).toBe('huile olive');
    expect(withoutElisions('officina dell’auto')).toBe('officina auto');
    expect(withoutElisions("don't o'brien it's l'")).toBe("don't o'brien it's l'");
  });

  it('rounds to six decimals as numeric does', () => {
    expect(round6(0.1234565)).toBe(0.123457);
    expect(round6(0.12345649)).toBe(0.123456);
    expect(round6(0.7)).toBe(0.7);
    expect(round6(0.9999996)).toBe(1);
  });
});
