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

/**
 * One lexeme's postings: pairs (position in the index, where its positions are), and beside
 * each pair the count of its positions per weight class (see `weightCode`), so a rank or a bound
 * reads the postings in order and not the pool (one cache miss per match). Where its positions
 * are: an offset in the pool, or, for a run of one or two positions below 8192 (most runs), the
 * run itself, inline (`inlineRun`): ranking several words then reads no pool for most matches.
 */
export interface Postings {
  data: Int32Array;
  /** codes[i] belongs to the pair at data[2 * i] */
  codes: Uint16Array;
  length: number;
}

/**
 * A run's positions counted per weight class, four bits each (D in the lowest, A in the
 * highest); 0 (no run is empty) when a class holds more than 15 and the pool must be read.
 */
export function weightCode(positions: ArrayLike<number>): number {
  const counts = [0, 0, 0, 0];
  for (let k = 0; k < positions.length; k++) counts[positions[k]! >>> 14]!++;
  if (counts.some((c) => c > 15)) return 0;
  return counts[0]! | (counts[1]! << 4) | (counts[2]! << 8) | (counts[3]! << 12);
}

/** Positions are kept in chunks of this many 16-bit entries (no copy as the index grows). */
const CHUNK = 1 << 20;

/**
 * A run of one or two positions (WordEntryPos, each below 8192) as a negative int32: -1 minus
 * (first entry | second entry << 15 | 1 << 30 when there are two), an entry being its weight
 * (2 bits) above its position (13 bits). Undefined for any other run (it goes to the pool).
 */
export function inlineRun(positions: ArrayLike<number>): number | undefined {
  const n = positions.length;
  if (n === 0 || n > 2) return undefined;
  let payload = 0;
  for (let k = 0; k < n; k++) {
    const p = positions[k]!;
    if ((p & 0x3fff) >= 8192) return undefined;
    payload |= (((p >>> 14) << 13) | (p & 0x1fff)) << (15 * k);
  }
  return -1 - (n === 2 ? payload | (1 << 30) : payload);
}

/** The entries of an inline run back in WordEntryPos form (see `inlineRun`). */
function inlineEntry(entry: number): number {
  return ((entry >>> 13) << 14) | (entry & 0x1fff);
}

/**
 * The inverted index: postings by lexeme, and a pool of positions in PostgreSQL's own 16-bit
 * form (WordEntryPos: weight in the top two bits, D 0 to A 3, position in the other 14), each
 * listing's run of a lexeme preceded by its length.
 */
export class KeywordIndex {
  readonly postings = new Map<string, Postings>();
  readonly chunks: Uint16Array[] = [];
  private used = CHUNK;

  /** Stores a run of positions, returns its offset. */
  store(positions: number[]): number {
    if (this.used + positions.length + 1 > CHUNK) {
      this.chunks.push(new Uint16Array(CHUNK));
      this.used = 0;
    }
    const chunk = this.chunks[this.chunks.length - 1]!;
    const offset = (this.chunks.length - 1) * CHUNK + this.used;
    chunk[this.used] = positions.length;
    chunk.set(positions, this.used + 1);
    this.used += positions.length + 1;
    return offset;
  }

  /** The run of positions of posting `pair` of `list` (WordEntryPos), inline or from the pool. */
  run(list: Postings, pair: number): number[] {
    const where = list.data[pair * 2 + 1]!;
    if (where < 0) {
      const payload = -1 - where;
      const first = inlineEntry(payload & 0x7fff);
      return payload & (1 << 30) ? [first, inlineEntry((payload >>> 15) & 0x7fff)] : [first];
    }
    const chunk = this.chunks[where >>> 20]!; // CHUNK is 2^20
    const at = where & (CHUNK - 1);
    return [...chunk.subarray(at + 1, at + 1 + chunk[at]!)];
  }

  add(lexeme: string, at: number, positions: number[]): void {
    let list = this.postings.get(lexeme);
    if (!list) {
      list = { data: new Int32Array(2), codes: new Uint16Array(1), length: 0 };
      this.postings.set(lexeme, list);
    } else if (list.length + 2 > list.data.length) {
      const data = new Int32Array(list.data.length * 2);
      data.set(list.data);
      list.data = data;
      const codes = new Uint16Array(list.codes.length * 2);
      codes.set(list.codes);
      list.codes = codes;
    }
    list.data[list.length] = at;
    list.data[list.length + 1] = inlineRun(positions) ?? this.store(positions);
    list.codes[list.length / 2] = weightCode(positions);
    list.length += 2;
  }
}

/** PostgreSQL's default weights {D 0.1, C 0.2, B 0.4, A 1.0} as float4, and 1 / w as calc_rank_cd holds them. */
const INV = [0.1, 0.2, 0.4, 1.0].map((w) => 1 / Math.fround(w));

/**
 * Adds the lexemes of one listing's `tsv::text` (`'lex':1A,5B 'other':3`) under position `at`.
 * Lexemes are quoted, with `''` and `\\` escaped; a position without a letter is weight D; a
 * lexeme without positions counts as one of weight D at position 0, as calc_rank_cd does.
 */
export function addPostings(index: KeywordIndex, at: number, tsv: string): void {
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
    const positions: number[] = [];
    if (tsv.charCodeAt(j) === 58 /* : */) {
      j++;
      let pos = 0;
      for (;;) {
        const c = j < n ? tsv.charCodeAt(j) : 32;
        if (c >= 48 && c <= 57) {
          pos = pos * 10 + (c - 48);
          j++;
          continue;
        }
        let weight = 0;
        if (c === 65) weight = 3;
        else if (c === 66) weight = 2;
        else if (c === 67) weight = 1;
        if (c >= 65 && c <= 68) j++;
        positions.push((weight << 14) | pos);
        pos = 0;
        if (j < n && tsv.charCodeAt(j) === 44 /* , */) {
          j++;
          continue;
        }
        break;
      }
    } else {
      positions.push(0);
    }
    index.add(lexeme, at, positions);
    i = j;
  }
}

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

/**
 * The first posting (pair index, from `from` on) of `list` whose position is at least `at`:
 * galloping forward then a binary search, so walking a list in order costs little per step.
 */
function gallop(list: Postings, from: number, at: number): number {
  const pairs = list.length >> 1;
  const data = list.data;
  let lo = from;
  let step = 1;
  let hi = lo;
  while (hi < pairs && data[hi * 2]! < at) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  hi = Math.min(hi, pairs - 1);
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (data[mid * 2]! < at) lo = mid + 1;
    else hi = mid - 1;
  }
  return lo;
}

/** Keyword matches and their ranks, as parallel arrays (position i: listing ats[i], rank ranks[i]). */
export interface Matches {
  ats: Int32Array;
  ranks: Float64Array;
}

/** Scratch space of keywordRanks, reused: one sum per listing position. */
let scratch = new Float64Array(0);

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
 * is the sum of their weights. One lexeme gives its matches in position order.
 */
export function keywordRanks(index: KeywordIndex, lexemes: string[], upTo: number): Matches {
  const lists = lexemes.flatMap((lexeme) => index.postings.get(lexeme) ?? []);
  const chunks = index.chunks;
  if (lists.length === 1) {
    const list = lists[0]!;
    const { data, length } = list;
    let n = 0;
    while (n * 2 < length && data[n * 2]! < upTo) n++; // positions are in sequence order
    const ats = new Int32Array(n);
    const ranks = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      ats[i] = data[i * 2]!;
      const wdoc = weightSum(chunks, list, i);
      ranks[i] = Math.fround(wdoc / (wdoc + 1)); // rankOf
    }
    return { ats, ranks };
  }
  if (scratch.length < upTo) scratch = new Float64Array(Math.max(upTo, Math.ceil(scratch.length * 1.5)));
  let most = 0;
  for (const list of lists) most += list.length / 2;
  const touched = new Int32Array(most);
  let n = 0;
  for (const list of lists) {
    const { data, length } = list;
    for (let i = 0; i < length; i += 2) {
      const at = data[i]!;
      if (at >= upTo) break;
      if (scratch[at] === 0) touched[n++] = at;
      scratch[at] = scratch[at]! + weightSum(chunks, list, i / 2);
    }
  }
  const ats = touched.slice(0, n);
  const ranks = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const at = ats[i]!;
    ranks[i] = rankOf(scratch[at]!);
    scratch[at] = 0;
  }
  return { ats, ranks };
}

/**
 * The positions below `upTo` in every one of `lists`, written to `out` (room for the shortest
 * list), their count returned: the shortest walked, the others merged or galloped.
 */
function intersect(lists: Postings[], upTo: number, out: Int32Array): number {
  const sorted = lists.slice().sort((a, b) => a.length - b.length);
  const first = sorted[0]!;
  const rest = sorted.slice(1);
  const data = first.data;
  const end = first.length;
  // the common case (two words): the merge of intersectTwo, its postings left in scratch
  if (rest.length === 1) return intersectTwo(first, rest[0]!, upTo, out, grown(4, end));
  let n = 0;
  const cursors = new Int32Array(rest.length);
  outer: for (let i = 0; i < end; i += 2) {
    const at = data[i]!;
    if (at >= upTo) break;
    for (let r = 0; r < rest.length; r++) {
      const list = rest[r]!;
      const c = gallop(list, cursors[r]!, at);
      cursors[r] = c;
      if (c >= list.length >> 1) break outer;
      if (list.data[c * 2] !== at) continue outer;
    }
    out[n++] = at;
  }
  return n;
}

/**
 * The positions below `upTo` in both `a` and `b`, into `out`, with their postings' pair indexes
 * into `pairs` (a's then b's, two a match); the count. The shorter list is walked, the other
 * merged or, when far longer, galloped.
 */
function intersectTwo(a: Postings, b: Postings, upTo: number, out: Int32Array, pairs: Int32Array): number {
  const aFirst = a.length <= b.length;
  const first = aFirst ? a : b;
  const other = aFirst ? b : a;
  const data = first.data;
  const end = first.length;
  const odata = other.data;
  const oend = other.length;
  const gallops = oend > 16 * end;
  let n = 0;
  let c = 0; // in `other`: a pair index when galloping, an index into data when merging
  for (let i = 0; i < end; i += 2) {
    const at = data[i]!;
    if (at >= upTo) break;
    let pair: number;
    if (gallops) {
      c = gallop(other, c, at);
      if (c >= oend >> 1) break;
      if (odata[c * 2] !== at) continue;
      pair = c;
    } else {
      while (c < oend && odata[c]! < at) c += 2;
      if (c >= oend) break;
      if (odata[c] !== at) continue;
      pair = c >> 1;
    }
    out[n] = at;
    pairs[2 * n + (aFirst ? 0 : 1)] = i >> 1;
    pairs[2 * n + (aFirst ? 1 : 0)] = pair;
    n++;
  }
  return n;
}

/** The first `na` of `a` and `nb` of `b` (ascending) merged into `out`, each value once; the count. */
function union(a: Int32Array, na: number, b: Int32Array, nb: number, out: Int32Array): number {
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < na && j < nb) {
    const x = a[i]!;
    const y = b[j]!;
    if (x <= y) {
      out[n++] = x;
      i++;
      if (x === y) j++;
    } else {
      out[n++] = y;
      j++;
    }
  }
  while (i < na) out[n++] = a[i++]!;
  while (j < nb) out[n++] = b[j++]!;
  return n;
}

/**
 * Scratch of `CoverRanker.matches`, reused (a broad query allocated megabytes a search, which
 * the collector then paid for): the union so far, a group's matches, the next union, pairs, and
 * the postings intersectTwo records for `intersect` (not read there).
 * What `matches` returns lives here until its next call.
 */
const scratch32: Int32Array[] = Array.from({ length: 5 }, () => new Int32Array(0));
let scratchBounds = new Float64Array(0);

/** Scratch buffer `which`, with room for at least `need` entries (its content not kept). */
function grown(which: number, need: number): Int32Array {
  if (scratch32[which]!.length < need) scratch32[which] = new Int32Array(Math.ceil(need * 1.5));
  return scratch32[which]!;
}

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
  private readonly index: KeywordIndex;
  /** Per operand, where the last lookup ended: ranks are asked in ascending positions. */
  private readonly cursors: Int32Array;
  private last = -1;
  /** Scratch of bound: entries per operand. */
  private readonly counts: Int32Array;
  /** Each group's operands as bits, when there are at most 30. */
  private readonly masks: number[] | undefined;
  /** Scratch of `rank(at)` and `bound(at)`: each operand's posting. */
  private readonly scratchPairs: Int32Array;

  constructor(index: KeywordIndex, groups: string[][]) {
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
  matches(upTo: number): CoverMatches {
    const ops = this.lists.length;
    if (this.groups.length === 1 && ops === 2 && this.lists[0] && this.lists[1]) {
      // two words in one group (the common case): the merge finds both postings as it goes
      const room = Math.min(this.lists[0].length, this.lists[1].length) >> 1;
      const pairs = grown(3, room * 2);
      const n = intersectTwo(this.lists[0], this.lists[1], upTo, grown(0, room), pairs);
      return this.withBounds(scratch32[0]!.subarray(0, n), scratch32[3]!.subarray(0, n * 2), 2);
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
    return this.withBounds(ats, pairs, ops);
  }

  /** The matches with the bound of each (in scratch, as `matches` returns them). */
  private withBounds(ats: Int32Array, pairs: Int32Array, ops: number): CoverMatches {
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
export function coverDensity(index: KeywordIndex, groups: string[][], at: number): number {
  return new CoverRanker(index, groups).rank(at);
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
  /** The lowest score kept once full (-Infinity before): a lower one is never accepted. */
  floor(): number {
    return this.heap.length < this.k
      ? Number.NEGATIVE_INFINITY
      : (this.heap[0]?.score ?? Number.NEGATIVE_INFINITY);
  }
  /** Whether an item of this score and id would be kept (checked before building it). */
  accepts(score: number, id: string): boolean {
    const h = this.heap;
    if (h.length < this.k) return true;
    const worst = h[0];
    return worst !== undefined && (worst.score < score || (worst.score === score && worst.id > id));
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
