// The keyword side of search in memory: an inverted index (lexeme -> listing positions) built
// from the `tsv` PostgreSQL or PGlite stored with each listing (the lexemes each language's
// stemmer computed, so matching is the SQL path's), held beside the vector index and caught up
// with it by sequence number (vectors.ts). A broad word ("Klempner", ~19,000 listings at a
// million) is ranked from typed arrays with a bounded top-k heap, and only the page's profiles
// are read; the SQL path read every match's row to rank it (seconds).
//
// Ranking is `ts_rank_cd(tsv, query, 32)` computed from the postings: for a query that is a
// disjunction of plain lexemes (one word in every language configuration, the common case),
// every position of a matching lexeme is a cover of its own, so the rank is the sum of the
// weights of those positions (A 1.0, B 0.4, C 0.2, D 0.1 as PostgreSQL's float4 constants),
// then rank / (rank + 1), returned as a float4. Each posting keeps the count of its positions
// per weight class. Queries with `&`, phrases, negation or prefixes (several words) are left to
// the SQL path, whose cover density needs the positions (they match far fewer listings).

/** One lexeme's postings: pairs (position in the index, packed counts A|B|C|D of 8 bits). */
export interface Postings {
  data: Int32Array;
  length: number;
}

/** PostgreSQL's default weights {D 0.1, C 0.2, B 0.4, A 1.0} as float4, and 1 / (1 / w) as calc_rank_cd adds them. */
const W = [0.1, 0.2, 0.4, 1.0].map((w) => 1 / (1 / Math.fround(w)));
const WD = W[0]!;
const WC = W[1]!;
const WB = W[2]!;
const WA = W[3]!;

function push(postings: Map<string, Postings>, lexeme: string, at: number, packed: number): void {
  let list = postings.get(lexeme);
  if (!list) {
    list = { data: new Int32Array(2), length: 0 };
    postings.set(lexeme, list);
  } else if (list.length + 2 > list.data.length) {
    const data = new Int32Array(list.data.length * 2);
    data.set(list.data);
    list.data = data;
  }
  list.data[list.length] = at;
  list.data[list.length + 1] = packed;
  list.length += 2;
}

/**
 * Adds the lexemes of one listing's `tsv::text` (`'lex':1A,5B 'other':3`) under position `at`.
 * Lexemes are quoted, with `''` and `\\` escaped; a position without a letter is weight D.
 */
export function addPostings(postings: Map<string, Postings>, at: number, tsv: string): void {
  let i = 0;
  const n = tsv.length;
  while (i < n) {
    if (tsv.charCodeAt(i) !== 39 /* ' */) {
      i++;
      continue;
    }
    // the lexeme
    let j = i + 1;
    let lexeme = '';
    let start = j;
    for (;;) {
      const c = tsv.charCodeAt(j);
      if (c === 39) {
        if (tsv.charCodeAt(j + 1) === 39) {
          lexeme += tsv.slice(start, j) + "'";
          j += 2;
          start = j;
          continue;
        }
        lexeme += tsv.slice(start, j);
        j++;
        break;
      }
      if (c === 92 /* \ */) {
        lexeme += tsv.slice(start, j) + tsv.charAt(j + 1);
        j += 2;
        start = j;
        continue;
      }
      if (j >= n) {
        lexeme += tsv.slice(start, j);
        break;
      }
      j++;
    }
    // the positions
    let a = 0;
    let b = 0;
    let cc = 0;
    let d = 0;
    if (tsv.charCodeAt(j) === 58 /* : */) {
      j++;
      while (j < n && tsv.charCodeAt(j) !== 32) {
        const c = tsv.charCodeAt(j);
        if (c >= 48 && c <= 57) {
          j++;
          continue;
        }
        if (c === 44 /* , */) {
          d++;
          j++;
          continue;
        }
        // a weight letter ends a position
        if (c === 65) a++;
        else if (c === 66) b++;
        else if (c === 67) cc++;
        else d++;
        j++;
        if (tsv.charCodeAt(j) === 44) j++;
      }
      // the last position when it carried no letter
      const last = tsv.charCodeAt(j - 1);
      if (last >= 48 && last <= 57) d++;
    } else {
      // no positions: calc_rank_cd counts one of weight D
      d = 1;
    }
    const sat = (x: number) => Math.min(255, x);
    push(postings, lexeme, at, sat(a) | (sat(b) << 8) | (sat(cc) << 16) | (sat(d) << 24));
    i = j;
  }
}

/** The sum of weights of a posting's positions (calc_rank_cd's Wdoc for one lexeme). */
export function weightOf(packed: number): number {
  return (
    (packed & 255) * WA +
    ((packed >>> 8) & 255) * WB +
    ((packed >>> 16) & 255) * WC +
    ((packed >>> 24) & 255) * WD
  );
}

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
  return groups;
}

/**
 * The listings (positions below `upTo`) holding every lexeme of at least one group: the
 * matches of a disjunction of conjunctions, from the postings alone.
 */
export function conjunctionMatches(
  postings: Map<string, Postings>,
  groups: string[][],
  upTo: number,
): number[] {
  const out = new Set<number>();
  for (const group of groups) {
    const lists = group.map((lexeme) => postings.get(lexeme));
    if (lists.length === 0 || lists.some((l) => !l)) continue;
    // walk the shortest list, look the others up by binary search (positions are sorted)
    const sorted = (lists as Postings[]).slice().sort((a, b) => a.length - b.length);
    const [first, ...rest] = sorted as [Postings, ...Postings[]];
    for (let i = 0; i < first.length; i += 2) {
      const at = first.data[i]!;
      if (at >= upTo) break;
      if (rest.every((list) => hasPosition(list, at))) out.add(at);
    }
  }
  return [...out].sort((a, b) => a - b);
}

function hasPosition(list: Postings, at: number): boolean {
  let lo = 0;
  let hi = list.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = list.data[mid * 2]!;
    if (v === at) return true;
    if (v < at) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * The rank of every listing matching any of `lexemes`, among positions [0, upTo): a map from
 * position to ts_rank_cd(tsv, query, 32).
 */
export function keywordRanks(
  postings: Map<string, Postings>,
  lexemes: string[],
  upTo: number,
): Map<number, number> {
  const wdoc = new Map<number, number>();
  for (const lexeme of lexemes) {
    const list = postings.get(lexeme);
    if (!list) continue;
    for (let i = 0; i < list.length; i += 2) {
      const at = list.data[i]!;
      if (at >= upTo) break; // positions are in sequence order
      wdoc.set(at, (wdoc.get(at) ?? 0) + weightOf(list.data[i + 1]!));
    }
  }
  const ranks = new Map<number, number>();
  for (const [at, w] of wdoc) ranks.set(at, rankOf(w));
  return ranks;
}

/** A bounded heap keeping the best `k` items by (score desc, id asc). */
export class TopK<T extends { score: number; id: string }> {
  private heap: T[] = [];
  private readonly k: number;
  constructor(k: number) {
    this.k = k;
  }
  /** true when a is worse than b (served after it) */
  private static worse(a: { score: number; id: string }, b: { score: number; id: string }): boolean {
    return a.score < b.score || (a.score === b.score && a.id > b.id);
  }
  offer(item: T): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(item);
      let i = h.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!TopK.worse(h[i]!, h[p]!)) break;
        [h[i], h[p]] = [h[p]!, h[i]!];
        i = p;
      }
      return;
    }
    if (this.k === 0 || !TopK.worse(h[0]!, item)) return;
    h[0] = item;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && TopK.worse(h[l]!, h[m]!)) m = l;
      if (r < h.length && TopK.worse(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
  /** best first */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
