// The keyword side of search in memory, its ranking: `ts_rank_cd(tsv, query, 32)` computed from
// the postings (postings.ts), so a broad word ("Klempner", ~19,000 listings at a million) is
// ranked from typed arrays and only the page's profiles are read (the SQL path read every
// match's row to rank it: seconds).
//
// A disjunction of plain lexemes (one word in every language configuration, the common case):
// every position of a matching lexeme is a cover of its own, so the rank is the sum of the
// weights of those positions (A 1.0, B 0.4, C 0.2, D 0.1 as PostgreSQL's float4 constants),
// then rank / (rank + 1), returned as a float4; each posting keeps the count of its positions
// per weight class (keywordRanks). A disjunction of conjunctions (several words): the matches
// from the postings, their cover density from the positions (CoverRanker). Phrases, negation,
// prefixes and parentheses are left to the SQL path.
import {
  CHUNK,
  gallop,
  grown,
  intersect,
  intersectTwo,
  type KeywordPostings,
  type Postings,
  scratch32,
  union,
} from './postings.ts';

/** PostgreSQL's default weights {D 0.1, C 0.2, B 0.4, A 1.0} as float4, and 1 / w as calc_rank_cd holds them. */
const INV = [0.1, 0.2, 0.4, 1.0].map((w) => 1 / Math.fround(w));

/** What one position of each weight adds to calc_rank_cd's Wdoc alone: 1 / (1 / w). */
const WEIGHT = INV.map((inv) => 1 / inv);

/** ts_rank_cd's normalisation 32 (rank / (rank + 1)), returned as float4 as PostgreSQL does. */
export function rankOf(wdoc: number): number {
  return Math.fround(wdoc / (wdoc + 1));
}

/**
 * The lexemes of a query given as the tsquery variants the SQL path builds (`'klempn'`,
 * `'a' | 'b'`), or undefined when any variant is more than a disjunction of plain lexemes.
 */
export function plainLexemes(variants: string[]): string[] | undefined {
  const out = new Set<string>();
  for (const variant of variants) {
    for (const part of variant.split(' | ')) {
      const m = /^'((?:[^'\\]|''|\\.)*)'$/.exec(part);
      if (!m) return undefined;
      out.add(m[1]!.replace(/''/g, "'").replace(/\\(.)/g, '$1'));
    }
  }
  return [...out];
}

/**
 * The conjunctions of plain lexemes a query's variants are (`'hair' & 'salon'`, one per
 * configuration, the whole query their disjunction), or undefined for anything else (phrases,
 * negation, prefixes, parentheses).
 */
export function lexemeGroups(variants: string[]): string[][] | undefined {
  const groups: string[][] = [];
  for (const variant of variants) {
    const group = new Set<string>();
    for (const part of variant.split(' & ')) {
      const m = /^'((?:[^'\\]|''|\\.)*)'$/.exec(part);
      if (!m) return undefined;
      group.add(m[1]!.replace(/''/g, "'").replace(/\\(.)/g, '$1'));
    }
    groups.push([...group]);
  }
  // CoverRanker numbers operands in 10 bits
  if (new Set(groups.flat()).size > 1000) return undefined;
  return groups;
}

/** Keyword matches and their ranks, as parallel arrays (position i: listing ats[i], rank ranks[i]). */
export interface Matches {
  ats: Int32Array;
  ranks: Float64Array;
}

/** Scratch space of keywordRanks, reused: one sum per listing position. */

/**
 * The sum of PostgreSQL's weights over a posting's run of positions: from its code, or from
 * the pool when a class held more than 15. (calc_rank_cd sums in position order; the order
 * moves the double's last bit at most, which the float4 rank does not show.)
 */
function weightSum(chunks: Uint16Array[], list: Postings, pair: number): number {
  const code = list.codes[pair]!;
  if (code !== 0) {
    return (
      (code >>> 12) * WEIGHT[3]! +
      ((code >>> 8) & 15) * WEIGHT[2]! +
      ((code >>> 4) & 15) * WEIGHT[1]! +
      (code & 15) * WEIGHT[0]!
    );
  }
  const offset = list.data[pair * 2 + 1]!;
  const chunk = chunks[offset >>> 20]!; // CHUNK is 2^20
  const start = offset & (CHUNK - 1);
  const end = start + 1 + chunk[start]!;
  let sum = 0;
  for (let k = start + 1; k < end; k++) sum += WEIGHT[chunk[k]! >>> 14]!;
  return sum;
}

/**
 * The rank of every listing matching any of `lexemes`, among positions [0, upTo):
 * ts_rank_cd(tsv, query, 32) in typed arrays (no map: a broad word matches tens of thousands).
 * Every position of a matching lexeme is a cover of its own (one entry, no noise), so the rank
 * is the sum of their weights. The matches come in position order.
 */
export function keywordRanks(
  index: KeywordPostings,
  lexemes: string[],
  upTo: number,
  /** when given, only the positions marked 1 in it (a geo search's circle: search/near.ts) */
  only?: Uint8Array,
): Matches {
  const lists = lexemes.flatMap((lexeme) => index.postings.get(lexeme) ?? []);
  const chunks = index.chunks;
  if (lists.length === 1) {
    const list = lists[0]!;
    const { data, length } = list;
    let n = 0;
    while (n * 2 < length && data[n * 2]! < upTo) n++; // positions are in sequence order
    let m = n;
    if (only) {
      m = 0;
      for (let i = 0; i < n; i++) m += only[data[i * 2]!]!;
    }
    const ats = new Int32Array(m);
    const ranks = new Float64Array(m);
    for (let i = 0, k = 0; i < n; i++) {
      const at = data[i * 2]!;
      if (only && only[at] !== 1) continue;
      ats[k] = at;
      const wdoc = weightSum(chunks, list, i);
      ranks[k++] = Math.fround(wdoc / (wdoc + 1)); // rankOf
    }
    return { ats, ranks };
  }
  // several lists, each ascending: merged in one walk, a position's weights summed in list order
  // (a scratch by position read and wrote 8 MB at random at 1M)
  const count = lists.length;
  const cursors = new Int32Array(count); // into each list's data, two entries a posting
  let most = 0;
  for (const list of lists) most += list.length / 2;
  const ats = new Int32Array(most);
  const ranks = new Float64Array(most);
  let n = 0;
  for (;;) {
    let lowest = upTo;
    for (let l = 0; l < count; l++) {
      const list = lists[l]!;
      const c = cursors[l]!;
      if (c < list.length && list.data[c]! < lowest) lowest = list.data[c]!;
    }
    if (lowest >= upTo) break;
    const wanted = !only || only[lowest] === 1;
    let wdoc = 0;
    for (let l = 0; l < count; l++) {
      const list = lists[l]!;
      const c = cursors[l]!;
      if (c < list.length && list.data[c] === lowest) {
        if (wanted) wdoc += weightSum(chunks, list, c >> 1);
        cursors[l] = c + 2;
      }
    }
    if (!wanted) continue;
    ats[n] = lowest;
    ranks[n++] = rankOf(wdoc);
  }
  return { ats: ats.subarray(0, n), ranks: ranks.subarray(0, n) };
}

let scratchBounds = new Float64Array(0);

/** The matches of a CoverRanker's groups (see `CoverRanker.matches`). */
export interface CoverMatches {
  /** ascending positions in the index */
  ats: Int32Array;
  /** beside each, an upper bound of its rank */
  bounds: Float64Array;
  /** each match's posting in each operand's list (pair index, -1 absent), `operands` a match */
  pairs: Int32Array;
  operands: number;
}

/**
 * What the cover of sorted entries `begin..end` adds to calc_rank_cd's Wdoc: its entries over
 * the sum of their inverse weights, divided by 1 + the noise words inside it (p <= q always
 * holds, the entries being sorted).
 */
function coverWeight(keys: Int32Array, begin: number, end: number): number {
  const p = keys[begin]! >>> 12;
  const q = keys[end]! >>> 12;
  let invSum = 0;
  for (let k = begin; k <= end; k++) invSum += INV[(keys[k]! >>> 10) & 3]!;
  const cpos = (end - begin + 1) / invSum;
  let noise = q - p - (end - begin);
  if (noise < 0) noise = Math.trunc((end - begin) / 2);
  return cpos / (1 + noise);
}

/**
 * ts_rank_cd(tsv, query, 32) for a query that is a disjunction of conjunctions of lexemes
 * (`groups`), ported from PostgreSQL's calc_rank_cd and Cover (tsrank.c): the query's
 * positions in the listing in order, each minimal extent (cover) satisfying the query found
 * left to right, each adding (entries / sum of 1 / weight) / (1 + noise words).
 */
export class CoverRanker {
  private readonly lists: (Postings | undefined)[];
  private readonly groups: number[][];
  private readonly exist: Uint8Array;
  private keys = new Int32Array(64);
  private readonly index: KeywordPostings;
  /** Per operand, where the last lookup ended: ranks are asked in ascending positions. */
  private readonly cursors: Int32Array;
  private last = -1;
  /** Scratch of bound: entries per operand. */
  private readonly counts: Int32Array;
  /** Each group's operands as bits, when there are at most 30. */
  private readonly masks: number[] | undefined;
  /** Scratch of `rank(at)` and `bound(at)`: each operand's posting. */
  private readonly scratchPairs: Int32Array;

  constructor(index: KeywordPostings, groups: string[][]) {
    this.index = index;
    const operands = [...new Set(groups.flat())];
    const operandOf = new Map(operands.map((lexeme, i) => [lexeme, i]));
    this.groups = groups.map((g) => g.map((lexeme) => operandOf.get(lexeme)!));
    this.lists = operands.map((lexeme) => index.postings.get(lexeme));
    this.exist = new Uint8Array(operands.length);
    this.cursors = new Int32Array(operands.length);
    this.counts = new Int32Array(operands.length);
    this.scratchPairs = new Int32Array(operands.length);
    this.masks =
      operands.length <= 30 ? this.groups.map((g) => g.reduce((m, o) => m | (1 << o), 0)) : undefined;
  }

  /** Whether the operands in `mask` satisfy a group (at most 30 operands, else `exist`). */
  private satisfiedBy(mask: number): boolean {
    for (const m of this.masks!) if ((mask & m) === m) return true;
    return false;
  }

  /** The pair index of `list`'s posting for `at`, or -1: galloping on from the operand's cursor. */
  private find(operand: number, list: Postings, at: number): number {
    const lo = gallop(list, this.cursors[operand]!, at);
    this.cursors[operand] = lo;
    return lo < list.length / 2 && list.data[lo * 2] === at ? lo : -1;
  }

  private satisfied(): boolean {
    for (const group of this.groups) {
      let all = true;
      for (const o of group) {
        if (this.exist[o] !== 1) {
          all = false;
          break;
        }
      }
      if (all) return true;
    }
    return false;
  }

  /** Each operand's posting for `at` (pair index, or -1) into `pairs` from `base`, by galloping. */
  private findAll(at: number, pairs: Int32Array, base: number): void {
    if (at < this.last) this.cursors.fill(0);
    this.last = at;
    for (let operand = 0; operand < this.lists.length; operand++) {
      const list = this.lists[operand];
      pairs[base + operand] = list ? this.find(operand, list, at) : -1;
    }
  }

  /**
   * Every listing below `upTo` satisfying a group, in ascending order, with its posting in each
   * operand's list and the bound of its rank: each group's matches by intersecting its lists,
   * their union, then one walk of each operand's list alongside the matches. Ranking a match
   * afterwards (`rankMatch`) reads its positions from the postings found here, with no second
   * search. The arrays returned are scratch, valid until the next call (use them at once).
   */
  matches(
    upTo: number,
    /** when given, only the positions marked 1 in it (a geo search's circle: search/near.ts) */
    only?: Uint8Array,
  ): CoverMatches {
    const ops = this.lists.length;
    if (this.groups.length === 1 && ops === 2 && this.lists[0] && this.lists[1]) {
      // two words in one group (the common case): the merge finds both postings as it goes
      const room = Math.min(this.lists[0].length, this.lists[1].length) >> 1;
      const pairs = grown(3, room * 2);
      const n = intersectTwo(this.lists[0], this.lists[1], upTo, grown(0, room), pairs);
      return this.withBounds(scratch32[0]!.subarray(0, n), scratch32[3]!.subarray(0, n * 2), 2, only);
    }
    // each group's matches (tight loops over typed arrays), then their union
    let n = 0;
    for (const group of this.groups) {
      const lists = group.map((o) => this.lists[o]);
      if (lists.some((l) => !l)) continue; // a lexeme no listing has: the group matches nothing
      const found = intersect(lists as Postings[], upTo, grown(1, lists[0]!.length >> 1));
      if (n === 0) {
        grown(0, found).set(scratch32[1]!.subarray(0, found));
        n = found;
      } else {
        n = union(scratch32[0]!, n, scratch32[1]!, found, grown(2, n + found));
        [scratch32[0], scratch32[2]] = [scratch32[2]!, scratch32[0]!];
      }
    }
    const ats = scratch32[0]!.subarray(0, n);
    // each match's posting in each operand's list: one walk of each list alongside the matches
    const pairs = grown(3, n * ops).subarray(0, n * ops);
    for (let o = 0; o < ops; o++) {
      const list = this.lists[o];
      if (!list) {
        for (let i = 0; i < n; i++) pairs[i * ops + o] = -1;
        continue;
      }
      const data = list.data;
      const end = list.length;
      let c = 0; // an index into data (two entries a posting)
      for (let i = 0; i < n; i++) {
        const at = ats[i]!;
        while (c < end && data[c]! < at) c += 2;
        pairs[i * ops + o] = c < end && data[c] === at ? c >> 1 : -1;
      }
    }
    return this.withBounds(ats, pairs, ops, only);
  }

  /**
   * The matches (those marked in `only`, when given) with the bound of each (in scratch, as
   * `matches` returns them).
   */
  private withBounds(
    allAts: Int32Array,
    allPairs: Int32Array,
    ops: number,
    only: Uint8Array | undefined,
  ): CoverMatches {
    let ats = allAts;
    let pairs = allPairs;
    if (only) {
      // kept in place: a match moves down, never up
      let k = 0;
      for (let i = 0; i < allAts.length; i++) {
        const at = allAts[i]!;
        if (only[at] !== 1) continue;
        if (k !== i) {
          allAts[k] = at;
          for (let o = 0; o < ops; o++) allPairs[k * ops + o] = allPairs[i * ops + o]!;
        }
        k++;
      }
      ats = allAts.subarray(0, k);
      pairs = allPairs.subarray(0, k * ops);
    }
    const n = ats.length;
    if (scratchBounds.length < n) scratchBounds = new Float64Array(Math.ceil(n * 1.5));
    const bounds = scratchBounds.subarray(0, n);
    for (let i = 0; i < n; i++) bounds[i] = this.boundOf(pairs, i * ops);
    return { ats, bounds, pairs, operands: ops };
  }

  /** Whether the operands found (`pairs[base + o] >= 0`) satisfy a group (any number of operands). */
  private satisfiedByPairs(pairs: Int32Array, base: number): boolean {
    for (const group of this.groups) {
      let all = true;
      for (const o of group) {
        if (pairs[base + o]! < 0) {
          all = false;
          break;
        }
      }
      if (all) return true;
    }
    return false;
  }

  /** The rank of match `i` of `m` (from `matches`, or its postings copied): `rank(m.ats[i])`. */
  rankMatch(m: Pick<CoverMatches, 'pairs' | 'operands'>, i: number): number {
    return this.rankFrom(m.pairs, i * m.operands);
  }

  /**
   * An upper bound of `rank(at)` read without ranking. Each cover adds at most its heaviest
   * weight (a harmonic mean of its weights, over 1 + noise). The covers found are distinct
   * minimal extents, each minimal for a group it satisfies, so there are at most as many as
   * the groups' minimal extents together: for one lexeme its entries, for two (a, b) at most
   * min(a + b - 1, 2 min(a, b)) (they alternate), for more the group's entries; and never more
   * than all the entries.
   */
  bound(at: number): number {
    this.findAll(at, this.scratchPairs, 0);
    return this.boundOf(this.scratchPairs, 0);
  }

  /** `bound` from each operand's posting (`pairs[base + operand]`, -1 when absent). */
  private boundOf(pairs: Int32Array, base: number): number {
    let entries = 0;
    let heaviest = 0;
    const counts = this.counts;
    for (let operand = 0; operand < this.lists.length; operand++) {
      counts[operand] = 0;
      const pair = pairs[base + operand]!;
      if (pair < 0) continue;
      const list = this.lists[operand]!;
      const code = list.codes[pair]!;
      if (code !== 0) {
        // the counts per class, from the code: no read of the pool
        let n = 0;
        for (let w = 0; w < 4; w++) {
          const count = (code >>> (w * 4)) & 15;
          n += count;
          if (count > 0) heaviest = Math.max(heaviest, w);
        }
        counts[operand] = n;
      } else {
        // a class past 15: never inline (runs of at most two are)
        const offset = list.data[pair * 2 + 1]!;
        const chunk = this.index.chunks[offset >>> 20]!; // CHUNK is 2^20
        const start = offset & (CHUNK - 1);
        const n = chunk[start]!;
        counts[operand] = n;
        for (let k = 0; k < n; k++) heaviest = Math.max(heaviest, chunk[start + 1 + k]! >>> 14);
      }
      entries += counts[operand]!;
    }
    let covers = 0;
    for (const group of this.groups) {
      if (group.length === 2) {
        const a = counts[group[0]!]!;
        const b = counts[group[1]!]!;
        if (a > 0 && b > 0) covers += Math.min(a + b - 1, 2 * Math.min(a, b));
        continue;
      }
      let sum = 0;
      let all = true;
      for (const o of group) {
        if (counts[o] === 0) all = false;
        sum += counts[o]!;
      }
      if (all) covers += sum;
    }
    return rankOf(Math.min(entries, covers) * (1 / INV[heaviest]!));
  }

  /** The cover loop of `rank` with the operands present as bits (sorted `keys`, `len` of them). */
  private rankByMasks(keys: Int32Array, len: number): number {
    let wdoc = 0;
    let from = 0;
    for (;;) {
      let mask = 0;
      let end = -1;
      for (let e = from; e < len; e++) {
        mask |= 1 << (keys[e]! & 0x3ff);
        if (this.satisfiedBy(mask)) {
          end = e;
          break;
        }
      }
      if (end < 0) break;
      mask = 0;
      let begin = end;
      for (let b = end; b >= from; b--) {
        mask |= 1 << (keys[b]! & 0x3ff);
        if (this.satisfiedBy(mask)) {
          begin = b;
          break;
        }
      }
      wdoc += coverWeight(keys, begin, end);
      from = begin + 1;
    }
    return rankOf(wdoc);
  }

  /** Room for `needed` keys in the scratch of `rankFrom`, what it holds kept. */
  private grow(needed: number): void {
    const keys = new Int32Array(needed * 2);
    keys.set(this.keys);
    this.keys = keys;
  }

  rank(at: number): number {
    this.findAll(at, this.scratchPairs, 0);
    return this.rankFrom(this.scratchPairs, 0);
  }

  /** `rank` from each operand's posting (`pairs[base + operand]`, -1 when absent). */
  private rankFrom(pairs: Int32Array, base: number): number {
    // get_docrep: (position, weight, operand) as one sort key: position, then weight, then operand
    let len = 0;
    for (let operand = 0; operand < this.lists.length; operand++) {
      const pair = pairs[base + operand]!;
      if (pair < 0) continue;
      const list = this.lists[operand]!;
      const where = list.data[pair * 2 + 1]!;
      if (len + 2 > this.keys.length) this.grow(len + 2);
      if (where < 0) {
        // inline: one or two entries (weight 2 bits, position 13 bits), no read of the pool
        const payload = -1 - where;
        const first = payload & 0x7fff;
        this.keys[len++] = ((first & 0x1fff) << 12) | ((first >>> 13) << 10) | operand;
        if (payload & (1 << 30)) {
          const second = (payload >>> 15) & 0x7fff;
          this.keys[len++] = ((second & 0x1fff) << 12) | ((second >>> 13) << 10) | operand;
        }
        continue;
      }
      const chunk = this.index.chunks[where >>> 20]!; // CHUNK is 2^20
      const start = where & (CHUNK - 1);
      const n = chunk[start]!;
      if (len + n > this.keys.length) this.grow(len + n);
      for (let k = 0; k < n; k++) {
        const p = chunk[start + 1 + k]!;
        this.keys[len++] = ((p & 0x3fff) << 12) | ((p >>> 14) << 10) | operand;
      }
    }
    if (len === 0) return 0;
    let keys = this.keys;
    if (len > 48) keys = keys.subarray(0, len).sort();
    else {
      // a few entries: insertion sort (the native sort of a subarray costs more)
      for (let i = 1; i < len; i++) {
        const key = keys[i]!;
        let j = i - 1;
        while (j >= 0 && keys[j]! > key) {
          keys[j + 1] = keys[j]!;
          j--;
        }
        keys[j + 1] = key;
      }
    }
    if (this.masks) return this.rankByMasks(keys, len);
    const exist = this.exist;
    let wdoc = 0;
    let from = 0;
    for (;;) {
      // Cover: the upper bound from `from`, moving up
      exist.fill(0);
      let end = -1;
      for (let e = from; e < len; e++) {
        exist[keys[e]! & 0x3ff] = 1;
        if (this.satisfied()) {
          end = e;
          break;
        }
      }
      if (end < 0) break;
      // the lower bound from the upper one, moving down
      exist.fill(0);
      let begin = end;
      for (let b = end; b >= from; b--) {
        exist[keys[b]! & 0x3ff] = 1;
        if (this.satisfied()) {
          begin = b;
          break;
        }
      }
      wdoc += coverWeight(keys, begin, end);
      from = begin + 1;
    }
    return rankOf(wdoc);
  }
}

/** The same for one listing (tests). */
export function coverDensity(index: KeywordPostings, groups: string[][], at: number): number {
  return new CoverRanker(index, groups).rank(at);
}
