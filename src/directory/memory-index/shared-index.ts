// The search index in shared memory: what ranking in memory reads of every listing (the columns
// below, in listing order by sequence number), the keyword postings (keywords.ts), the listings
// of each NACE code, the embeddings (a shared WebAssembly memory, ../dot.ts) and the ids' order.
// One process holds it once, however many threads search it (src/cluster.ts). One thread, the
// index's owner, adds to it; the others attach to the same memory (`handles`) and read what the
// owner has published: listings below `size`, stored with Atomics after everything they are
// made of.
import { createVectorMemory } from '../dot.ts';
import { Growable } from './growable.ts';
import { SharedKeywords, type KeywordsHandles } from './keywords.ts';
import { Lists, type ListsHandles } from './lists.ts';
import { Dictionary, type DictionaryHandles, Texts, type TextsHandles } from './strings.ts';

/** The most listings the index reserves address space for (the embeddings allow ~11 million). */
export const MAX_LISTINGS = 2 ** 26;

/** The per-listing columns, by position: name and element type. */
export const COLUMNS = {
  seqs: Float64Array,
  scales: Float32Array,
  reviews: Int32Array,
  claimed: Uint8Array,
  responses: Float32Array,
  ratings64: Float64Array,
  lats: Float64Array,
  lons: Float64Array,
  countries: Uint16Array,
  cities: Int32Array,
  districts: Int32Array,
  /** where each position's embedding sits when the load grouped them by activity (../vectors.ts) */
  slots: Int32Array,
  /** positions in id order, as of the start-up load (../search/fusion.ts extends it) */
  order: Int32Array,
} as const;
export type ColumnName = keyof typeof COLUMNS;
type Columns = { [K in ColumnName]: InstanceType<(typeof COLUMNS)[K]> };
/** The columns `reserve` grows, each by its own steps (slots and order grow on their own schedule). */
const RESERVED_COLUMNS = (Object.keys(COLUMNS) as ColumnName[]).filter((n) => n !== 'slots' && n !== 'order');

/** meta: [listings published, positions with a slot, positions in `order`, the start-up load done] */
const SIZE = 0;
const SLOTS = 1;
const ORDER = 2;
const LOADED = 3;

/** A dictionary as search reads it (a Map's reading half). */
export interface Names {
  get(name: string): number | undefined;
  has(name: string): boolean;
  readonly size: number;
}

/** What search reads besides the vectors; positions are in sequence order. */
export interface ListingColumns {
  size: number;
  seqs: Float64Array;
  /** the trust signals, so an unfiltered search ranks without reading rows */
  reviews: Int32Array;
  claimed: Uint8Array;
  responses: Float32Array;
  /** what keyword search filters on (keywords/): exact copies of the columns */
  ratings64: Float64Array;
  lats: Float64Array;
  lons: Float64Array;
  countries: Uint16Array;
  cities: Int32Array;
  /** the district's id in `cityIds` (0 is '', no district) */
  districts: Int32Array;
  /** dictionaries of the country and city (and district) codes above */
  countryIds: Names;
  cityIds: Names;
  /** keyword postings by lexeme of `tsv` (keywords/postings.ts) */
  keywords: SharedKeywords;
  /** positions by NACE code (each activity and the codes above it), ascending: semantic candidates */
  byCode: { get(code: string): Int32Array | undefined };
  /** the listing id at a position */
  idAt(at: number): string;
  /** positions in id order as the start-up load left them (the first `size` of them) */
  baseOrder: { size: number; byRank: Int32Array };
}

export interface IndexHandles {
  meta: SharedArrayBuffer;
  columns: Record<ColumnName, SharedArrayBuffer>;
  ids: TextsHandles;
  countries: DictionaryHandles;
  cities: DictionaryHandles;
  codes: DictionaryHandles;
  byCode: ListsHandles;
  keywords: KeywordsHandles;
  memory: WebAssembly.Memory;
}

export class SharedIndex {
  readonly meta: Int32Array;
  readonly columnBuffers: Record<ColumnName, Growable>;
  readonly ids: Texts;
  readonly countries: Dictionary;
  readonly cities: Dictionary;
  readonly codes: Dictionary;
  readonly byCode: Lists;
  readonly keywords: SharedKeywords;
  readonly memory: WebAssembly.Memory;
  /** the columns' bytes summed when `#columns` was made (they only grow: any growth changes it) */
  #viewed = -1;
  #columns: Columns | undefined;
  #reading: ListingColumns | undefined;
  /** the `#columns` that `#reading` was made of */
  #readingOf: Columns | undefined;

  constructor(handles?: IndexHandles) {
    this.meta = new Int32Array(handles?.meta ?? new SharedArrayBuffer(16));
    this.columnBuffers = Object.fromEntries(
      Object.entries(COLUMNS).map(([name, Type]) => [
        name,
        handles
          ? new Growable(handles.columns[name as ColumnName])
          : Growable.create(MAX_LISTINGS * Type.BYTES_PER_ELEMENT),
      ]),
    ) as Record<ColumnName, Growable>;
    this.ids = new Texts(handles?.ids);
    this.countries = new Dictionary(handles?.countries);
    this.cities = new Dictionary(handles?.cities);
    this.codes = new Dictionary(handles?.codes);
    this.byCode = new Lists({ width: 1, codes: false, maxRecords: MAX_LISTINGS * 16 }, handles?.byCode);
    this.keywords = new SharedKeywords(handles?.keywords);
    this.memory = handles?.memory ?? createVectorMemory();
    if (!handles) this.cities.idOf(''); // id 0: no district
  }

  handles(): IndexHandles {
    return {
      meta: this.meta.buffer as SharedArrayBuffer,
      columns: Object.fromEntries(
        Object.entries(this.columnBuffers).map(([name, g]) => [name, g.sab]),
      ) as Record<ColumnName, SharedArrayBuffer>,
      ids: this.ids.handles(),
      countries: this.countries.handles(),
      cities: this.cities.handles(),
      codes: this.codes.handles(),
      byCode: this.byCode.handles(),
      keywords: this.keywords.handles(),
      memory: this.memory,
    };
  }

  /** Listings published. */
  get size(): number {
    return Atomics.load(this.meta, SIZE);
  }

  /** The highest sequence number published (0 for none). */
  get maxSeq(): number {
    const size = this.size;
    return size === 0 ? 0 : this.column('seqs')[size - 1]!;
  }

  /** Whether the start-up load has been laid out (later listings are appended). */
  get loaded(): boolean {
    return Atomics.load(this.meta, LOADED) === 1;
  }

  /** Positions whose embedding was moved by the grouping (`slots`). */
  get slotted(): number {
    return Atomics.load(this.meta, SLOTS);
  }

  /** This thread's view of a column (the whole reserved length; positions below `size` hold). */
  column<K extends ColumnName>(name: K): Columns[K] {
    // slots and order grow on their own schedule
    if (name === 'slots' || name === 'order') return this.#viewOf(name);
    return this.#currentColumns()[name];
  }

  /** Views of every column, remade when any has grown (each grows on its own, by its bytes). */
  #currentColumns(): Columns {
    let bytes = 0;
    for (const n of RESERVED_COLUMNS) bytes += this.columnBuffers[n].bytes;
    if (bytes !== this.#viewed || !this.#columns) {
      const views: Partial<Record<ColumnName, unknown>> = {};
      for (const n of Object.keys(COLUMNS) as ColumnName[]) views[n] = this.#viewOf(n);
      this.#columns = views as Columns;
      this.#viewed = bytes;
    }
    return this.#columns;
  }

  #viewOf<K extends ColumnName>(name: K): Columns[K] {
    const Type = COLUMNS[name] as unknown as new (b: SharedArrayBuffer, o: number, n: number) => Columns[K];
    return this.columnBuffers[name].view(Type as never) as Columns[K];
  }

  /** What search reads, as of now. */
  reading(): ListingColumns {
    const size = this.size;
    const columns = this.#currentColumns();
    // stale when the columns' views were remade since, whoever remade them (column() too)
    if (!this.#reading || this.#readingOf !== columns) {
      this.#readingOf = columns;
      const c = (name: ColumnName) => columns[name];
      const ids = this.ids;
      const codes = this.codes;
      const byCode = this.byCode;
      this.#reading = {
        size,
        seqs: c('seqs') as Float64Array,
        reviews: c('reviews') as Int32Array,
        claimed: c('claimed') as Uint8Array,
        responses: c('responses') as Float32Array,
        ratings64: c('ratings64') as Float64Array,
        lats: c('lats') as Float64Array,
        lons: c('lons') as Float64Array,
        countries: c('countries') as Uint16Array,
        cities: c('cities') as Int32Array,
        districts: c('districts') as Int32Array,
        countryIds: this.countries,
        cityIds: this.cities,
        keywords: this.keywords,
        byCode: {
          get(code) {
            const id = codes.get(code);
            return id === undefined ? undefined : byCode.view(id)?.data;
          },
        },
        idAt: (at) => ids.at(at),
        baseOrder: { size: 0, byRank: new Int32Array(0) },
      };
    }
    const reading = this.#reading;
    reading.size = size;
    const ordered = Atomics.load(this.meta, ORDER);
    if (reading.baseOrder.size !== ordered) {
      reading.baseOrder = { size: ordered, byRank: this.column('order').subarray(0, ordered) };
    }
    return reading;
  }

  // The owner's side.

  /** Room for `capacity` listings in every column (the owner). */
  reserve(capacity: number): void {
    for (const name of RESERVED_COLUMNS)
      this.columnBuffers[name].reserve(capacity * COLUMNS[name].BYTES_PER_ELEMENT);
  }

  /** Makes listings below `size` visible to every thread (the owner, after writing them). */
  publish(size: number): void {
    Atomics.store(this.meta, SIZE, size);
  }

  /** Marks the start-up load done (the owner). */
  markLoaded(): void {
    Atomics.store(this.meta, LOADED, 1);
  }

  /** Records the grouping of the first `count` embeddings (the owner, before publishing them). */
  setSlotted(count: number): void {
    Atomics.store(this.meta, SLOTS, count);
  }

  /** Records the ids' order of the first `count` positions (the owner, after writing `order`). */
  setOrdered(count: number): void {
    Atomics.store(this.meta, ORDER, count);
  }
}
