// The keyword side of search in memory, its index: an inverted index (lexeme -> listing
// positions) built from the `tsv` PostgreSQL or PGlite stored with each listing (the lexemes each
// language's stemmer computed, so matching is the SQL path's), held beside the vector index and
// caught up with it by sequence number (vectors.ts); and the operations on postings (gallop,
// intersect, union) the ranker (ranker.ts) walks them with.

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
export const CHUNK = 1 << 20;

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

/** Postings by lexeme, as the ranker reads them (a Map, or the shared index's dictionary). */
export interface PostingsByLexeme {
  get(lexeme: string): Postings | undefined;
  has(lexeme: string): boolean;
  readonly size: number;
  keys(): IterableIterator<string>;
}

/**
 * What ranking reads of an inverted index: `KeywordIndex` below (built in one thread's memory),
 * or the index in shared memory (../memory-index/keywords.ts) that every thread reads.
 */
export interface KeywordPostings {
  readonly postings: PostingsByLexeme;
  /** the pool of positions, in chunks of CHUNK entries */
  readonly chunks: Uint16Array[];
  run(list: Postings, pair: number): number[];
}

/** What `addPostings` adds a listing's lexemes to. */
export interface PostingsSink {
  add(lexeme: string, at: number, positions: number[]): void;
}

/** The run of positions of posting `pair` of `list` (WordEntryPos), inline or from the pool. */
export function runOf(chunks: Uint16Array[], list: Postings, pair: number): number[] {
  const where = list.data[pair * 2 + 1]!;
  if (where < 0) {
    const payload = -1 - where;
    const first = inlineEntry(payload & 0x7fff);
    return payload & (1 << 30) ? [first, inlineEntry((payload >>> 15) & 0x7fff)] : [first];
  }
  const chunk = chunks[where >>> 20]!; // CHUNK is 2^20
  const at = where & (CHUNK - 1);
  return [...chunk.subarray(at + 1, at + 1 + chunk[at]!)];
}

/**
 * The inverted index: postings by lexeme, and a pool of positions in PostgreSQL's own 16-bit
 * form (WordEntryPos: weight in the top two bits, D 0 to A 3, position in the other 14), each
 * listing's run of a lexeme preceded by its length.
 */
export class KeywordIndex implements KeywordPostings, PostingsSink {
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
    return runOf(this.chunks, list, pair);
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

/**
 * Adds the lexemes of one listing's `tsv::text` (`'lex':1A,5B 'other':3`) under position `at`.
 * Lexemes are quoted, with `''` and `\\` escaped; a position without a letter is weight D; a
 * lexeme without positions counts as one of weight D at position 0, as calc_rank_cd does.
 */
export function addPostings(index: PostingsSink, at: number, tsv: string): void {
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

/**
 * The first posting (pair index, from `from` on) of `list` whose position is at least `at`:
 * galloping forward then a binary search, so walking a list in order costs little per step.
 */
export function gallop(list: Postings, from: number, at: number): number {
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

/**
 * Scratch of `CoverRanker.matches`, reused (a broad query allocated megabytes a search, which
 * the collector then paid for): the union so far, a group's matches, the next union, pairs, and
 * the postings intersectTwo records for `intersect` (not read there).
 * What `matches` returns lives here until its next call.
 */
export const scratch32: Int32Array[] = Array.from({ length: 5 }, () => new Int32Array(0));

/** Scratch buffer `which`, with room for at least `need` entries (its content not kept). */
export function grown(which: number, need: number): Int32Array {
  if (scratch32[which]!.length < need) scratch32[which] = new Int32Array(Math.ceil(need * 1.5));
  return scratch32[which]!;
}

/**
 * The positions below `upTo` in every one of `lists`, written to `out` (room for the shortest
 * list), their count returned: the shortest walked, the others merged or galloped.
 */
export function intersect(lists: Postings[], upTo: number, out: Int32Array): number {
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
export function intersectTwo(
  a: Postings,
  b: Postings,
  upTo: number,
  out: Int32Array,
  pairs: Int32Array,
): number {
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
export function union(a: Int32Array, na: number, b: Int32Array, nb: number, out: Int32Array): number {
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
