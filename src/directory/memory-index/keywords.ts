// The inverted index of keyword search (../keywords/postings.ts) in shared memory: the lexemes
// in a shared dictionary, each lexeme's postings a shared list (pairs of listing position and
// where its positions are, a weight code beside each), the positions in one shared pool cut in
// chunks as the private index cuts them. Every thread ranks from it (KeywordPostings); the
// index's owner adds to it.
import {
  CHUNK,
  inlineRun,
  type KeywordPostings,
  type Postings,
  type PostingsByLexeme,
  type PostingsSink,
  runOf,
  weightCode,
} from '../keywords/postings.ts';
import { Growable } from './growable.ts';
import { type ListsHandles, Lists } from './lists.ts';
import { Dictionary, type DictionaryHandles } from './strings.ts';

export interface KeywordsHandles {
  lexemes: DictionaryHandles;
  postings: ListsHandles;
  pool: SharedArrayBuffer;
  meta: SharedArrayBuffer;
}

/** The most postings (pairs) and pool entries the index reserves address space for. */
const MAX_POSTINGS = 2 ** 31;
const MAX_POOL_CHUNKS = 2 ** 11; // CHUNK (2^20) entries each: the pool's offsets are int32

/** meta: [chunks in the pool, entries used in the last] */
const CHUNKS = 0;
const USED = 1;

export class SharedKeywords implements KeywordPostings, PostingsSink {
  readonly lexemes: Dictionary;
  readonly lists: Lists;
  readonly #pool: Growable;
  readonly meta: Int32Array;
  #chunks: Uint16Array[] = [];
  #chunksOf = -1;
  readonly postings: PostingsByLexeme;

  constructor(handles?: KeywordsHandles) {
    this.lexemes = new Dictionary(handles?.lexemes);
    this.lists = new Lists({ width: 2, codes: true, maxRecords: MAX_POSTINGS }, handles?.postings);
    this.#pool = handles ? new Growable(handles.pool) : Growable.create(MAX_POOL_CHUNKS * CHUNK * 2);
    this.meta = new Int32Array(handles?.meta ?? new SharedArrayBuffer(8));
    const lexemes = this.lexemes;
    this.postings = {
      get: (lexeme) => {
        const id = lexemes.get(lexeme);
        return id === undefined ? undefined : this.postingsOf(id);
      },
      has: (lexeme) => lexemes.has(lexeme),
      get size() {
        return lexemes.size;
      },
      keys: () => lexemes.keys(),
    };
  }

  handles(): KeywordsHandles {
    return {
      lexemes: this.lexemes.handles(),
      postings: this.lists.handles(),
      pool: this.#pool.sab,
      meta: this.meta.buffer as SharedArrayBuffer,
    };
  }

  /** Lexeme `id`'s postings as they are now. */
  postingsOf(id: number): Postings | undefined {
    const view = this.lists.view(id);
    if (!view) return undefined;
    return { data: view.data, codes: view.codes!, length: view.length * 2 };
  }

  /** The pool in chunks (views of the shared pool, remade when it has grown). */
  get chunks(): Uint16Array[] {
    const count = Atomics.load(this.meta, CHUNKS);
    if (count !== this.#chunksOf) {
      const pool = this.#pool.view(Uint16Array);
      this.#chunks = Array.from({ length: count }, (_, k) => pool.subarray(k * CHUNK, (k + 1) * CHUNK));
      this.#chunksOf = count;
    }
    return this.#chunks;
  }

  run(list: Postings, pair: number): number[] {
    return runOf(this.chunks, list, pair);
  }

  /** Stores a run of positions in the pool, returns its offset (the owner). */
  store(positions: number[]): number {
    let chunks = this.meta[CHUNKS]!;
    let used = this.meta[USED]!;
    if (chunks === 0 || used + positions.length + 1 > CHUNK) {
      this.#pool.reserve((chunks + 1) * CHUNK * 2);
      chunks++;
      used = 0;
      Atomics.store(this.meta, CHUNKS, chunks);
    } else {
      // a pool read from a snapshot holds its last chunk's used part only (no-op once grown)
      this.#pool.reserve(chunks * CHUNK * 2);
    }
    const pool = this.#pool.view(Uint16Array);
    const offset = (chunks - 1) * CHUNK + used;
    pool[offset] = positions.length;
    pool.set(positions, offset + 1);
    this.meta[USED] = used + positions.length + 1;
    return offset;
  }

  /** Adds a posting of `lexeme` for listing `at` after the start-up load (the owner). */
  add(lexeme: string, at: number, positions: number[]): void {
    const id = this.lexemes.idOf(lexeme);
    pair[0] = at;
    pair[1] = inlineRun(positions) ?? this.store(positions);
    this.lists.append(id, pair, weightCode(positions));
  }

  /** The pool in use (a snapshot). */
  poolExtent(): { pool: Growable; chunks: number; used: number } {
    return { pool: this.#pool, chunks: this.meta[CHUNKS]!, used: this.meta[USED]! };
  }
}

const pair = new Int32Array(2);

/** Postings a chunk of the start-up load holds (chunks: no copy as the load grows). */
const LOAD_CHUNK = 1 << 20;

/**
 * The start-up load's postings, gathered before they are laid out: each posting as it comes
 * (lexeme number, where its positions are, weight code), each listing's count, then every
 * lexeme's list laid out once, exactly, in shared memory (`finish`). Lists grown by doubling
 * in shared memory would leave their old places behind, as much again as they hold.
 */
export class KeywordLoad implements PostingsSink {
  readonly #keywords: SharedKeywords;
  readonly #ids: Uint32Array[] = [];
  readonly #wheres: Int32Array[] = [];
  readonly #codes: Uint16Array[] = [];
  #n = 0;
  /** listings in order, with how many postings each */
  #ats = new Int32Array(1024);
  #counts = new Int32Array(1024);
  #listings = 0;

  constructor(keywords: SharedKeywords) {
    this.#keywords = keywords;
  }

  add(lexeme: string, at: number, positions: number[]): void {
    const id = this.#keywords.lexemes.idOf(lexeme);
    const k = this.#n & (LOAD_CHUNK - 1);
    if (k === 0) {
      this.#ids.push(new Uint32Array(LOAD_CHUNK));
      this.#wheres.push(new Int32Array(LOAD_CHUNK));
      this.#codes.push(new Uint16Array(LOAD_CHUNK));
    }
    const c = this.#ids.length - 1;
    this.#ids[c]![k] = id;
    this.#wheres[c]![k] = inlineRun(positions) ?? this.#keywords.store(positions);
    this.#codes[c]![k] = weightCode(positions);
    this.#n++;
    const last = this.#listings - 1;
    if (last >= 0 && this.#ats[last] === at) {
      this.#counts[last]!++;
      return;
    }
    if (this.#listings === this.#ats.length) {
      const ats = new Int32Array(this.#listings * 2);
      ats.set(this.#ats);
      this.#ats = ats;
      const counts = new Int32Array(this.#listings * 2);
      counts.set(this.#counts);
      this.#counts = counts;
    }
    this.#ats[this.#listings] = at;
    this.#counts[this.#listings++] = 1;
  }

  /** Lays every list out in shared memory (they were all empty), and lets the load go. */
  finish(): void {
    const counts = new Uint32Array(this.#keywords.lexemes.size);
    for (let c = 0; c < this.#ids.length; c++) {
      const ids = this.#ids[c]!;
      const end = Math.min(LOAD_CHUNK, this.#n - c * LOAD_CHUNK);
      for (let k = 0; k < end; k++) counts[ids[k]!]!++;
    }
    this.#keywords.lists.freeze(counts, (places, data, codes) => {
      const next = Float64Array.from(places);
      let r = 0;
      for (let l = 0; l < this.#listings; l++) {
        const at = this.#ats[l]!;
        for (let left = this.#counts[l]!; left > 0; left--, r++) {
          const c = Math.floor(r / LOAD_CHUNK);
          const k = r & (LOAD_CHUNK - 1);
          const id = this.#ids[c]![k]!;
          const place = next[id]!++;
          data[place * 2] = at;
          data[place * 2 + 1] = this.#wheres[c]![k]!;
          codes![place] = this.#codes[c]![k]!;
        }
      }
    });
    this.#ids.length = 0;
    this.#wheres.length = 0;
    this.#codes.length = 0;
  }
}
