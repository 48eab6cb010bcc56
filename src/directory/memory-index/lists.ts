// Lists in shared memory, one per dictionary entry (a lexeme's postings, a NACE code's
// positions), each contiguous so the ranker walks it as one typed array. Records are `width`
// int32s, and with `codes` one 16-bit code beside each (the postings' weight counts).
//
// A list is built once, exactly sized with an eighth of room to spare (`freeze`, after the
// start-up load), and then grows by appends: one that is full moves to the end of the region
// with half as much room again. The place it leaves is not reused until the index is written
// out and read back (a snapshot is compact), so a reader holding the old place reads what it
// held. One thread writes; a reader loads a list's length, then its place (Atomics): the writer
// copies a list before it stores the new place, and stores the length after the records.
import { Growable } from './growable.ts';

export interface ListsHandles {
  entries: SharedArrayBuffer;
  data: SharedArrayBuffer;
  codes: SharedArrayBuffer | undefined;
  meta: SharedArrayBuffer;
}

/** entries: per list [place (in records), length, room] */
const PLACE = 0;
const LENGTH = 1;
const ROOM = 2;
/** meta: [records allocated, lists] */
const ALLOCATED = 0;
const LISTS = 1;

/** A list as a reader sees it: `data[width * i + f]` for record i < length. */
export interface ListView {
  data: Int32Array;
  codes: Uint16Array | undefined;
  length: number;
}

export class Lists {
  readonly width: number;
  readonly #entries: Growable;
  readonly #data: Growable;
  readonly #codes: Growable | undefined;
  readonly meta: Int32Array;

  constructor(options: { width: number; codes: boolean; maxRecords: number }, handles?: ListsHandles) {
    this.width = options.width;
    this.#entries = handles ? new Growable(handles.entries) : Growable.create(2 ** 30);
    this.#data = handles
      ? new Growable(handles.data)
      : Growable.create(options.maxRecords * options.width * 4);
    this.#codes = handles
      ? handles.codes && new Growable(handles.codes)
      : options.codes
        ? Growable.create(options.maxRecords * 2)
        : undefined;
    this.meta = new Int32Array(handles?.meta ?? new SharedArrayBuffer(8));
  }

  handles(): ListsHandles {
    return {
      entries: this.#entries.sab,
      data: this.#data.sab,
      codes: this.#codes?.sab,
      meta: this.meta.buffer as SharedArrayBuffer,
    };
  }

  get count(): number {
    return Atomics.load(this.meta, LISTS);
  }

  /** List `id`'s records as they are now (undefined for a list not made yet). */
  view(id: number): ListView | undefined {
    if (id >= Atomics.load(this.meta, LISTS)) return undefined;
    const entries = this.#entries.view(Uint32Array);
    const length = Atomics.load(entries, id * 3 + LENGTH);
    const place = Atomics.load(entries, id * 3 + PLACE);
    const w = this.width;
    return {
      data: this.#data.view(Int32Array).subarray(place * w, (place + length) * w),
      codes: this.#codes?.view(Uint16Array).subarray(place, place + length),
      length,
    };
  }

  /** How many records list `id` holds. */
  lengthOf(id: number): number {
    return Atomics.load(this.#entries.view(Uint32Array), id * 3 + LENGTH);
  }

  /** Makes empty lists up to `count` (the writer). */
  ensureLists(count: number): void {
    const lists = this.meta[LISTS]!;
    if (count <= lists) return;
    this.#entries.reserve(count * 12);
    Atomics.store(this.meta, LISTS, count);
  }

  /** Appends one record to list `id` (the writer): `values` are its `width` int32s. */
  append(id: number, values: ArrayLike<number>, code = 0): void {
    this.ensureLists(id + 1);
    const entries = this.#entries.view(Uint32Array);
    const base = id * 3;
    let place = entries[base + PLACE]!;
    const length = entries[base + LENGTH]!;
    const room = entries[base + ROOM]!;
    const w = this.width;
    if (length === room) {
      const grown = Math.max(4, Math.ceil(room * 1.5));
      const to = this.#allocate(grown);
      const data = this.#data.view(Int32Array);
      data.copyWithin(to * w, place * w, (place + length) * w);
      if (this.#codes) {
        const codes = this.#codes.view(Uint16Array);
        codes.copyWithin(to, place, place + length);
      }
      entries[base + ROOM] = grown;
      Atomics.store(entries, base + PLACE, to);
      place = to;
    }
    const data = this.#data.view(Int32Array);
    for (let f = 0; f < w; f++) data[(place + length) * w + f] = values[f]!;
    if (this.#codes) this.#codes.view(Uint16Array)[place + length] = code;
    Atomics.store(entries, base + LENGTH, length + 1);
  }

  /** Records at the end of the region for `records` more (the writer). */
  #allocate(records: number): number {
    const at = this.meta[ALLOCATED]!;
    this.#data.reserve((at + records) * this.width * 4);
    this.#codes?.reserve((at + records) * 2);
    this.meta[ALLOCATED] = at + records;
    return at;
  }

  /**
   * Lays out every list at once from records given in list order: `counts[id]` records for list
   * `id`, each list with room for an eighth more; `fill(place)` writes list after list, given
   * where each starts (in records). Lists must all be empty (the start-up load).
   */
  freeze(
    counts: ArrayLike<number>,
    fill: (places: Float64Array, data: Int32Array, codes: Uint16Array | undefined) => void,
  ): void {
    const n = counts.length;
    const places = new Float64Array(n);
    let total = 0;
    const rooms = new Uint32Array(n);
    for (let id = 0; id < n; id++) {
      const count = counts[id]!;
      const room = count + Math.ceil(count / 8) + 1;
      places[id] = this.meta[ALLOCATED]! + total;
      rooms[id] = room;
      total += room;
    }
    this.#allocate(total);
    this.ensureLists(n);
    fill(places, this.#data.view(Int32Array), this.#codes?.view(Uint16Array));
    const entries = this.#entries.view(Uint32Array);
    for (let id = 0; id < n; id++) {
      if (entries[id * 3 + LENGTH] !== 0) throw new Error('freeze expects empty lists');
      entries[id * 3 + ROOM] = rooms[id]!;
      Atomics.store(entries, id * 3 + PLACE, places[id]!);
      Atomics.store(entries, id * 3 + LENGTH, counts[id]!);
    }
  }

  /** The buffers and what of them is in use (a snapshot). */
  extent(): {
    entries: Growable;
    data: Growable;
    codes: Growable | undefined;
    lists: number;
    records: number;
  } {
    return {
      entries: this.#entries,
      data: this.#data,
      codes: this.#codes,
      lists: this.meta[LISTS]!,
      records: this.meta[ALLOCATED]!,
    };
  }

  /** Sets what is in use from a snapshot (a new index, before any reader). */
  restore(lists: number, records: number): void {
    this.#entries.reserve(lists * 12);
    this.#data.reserve(records * this.width * 4);
    this.#codes?.reserve(records * 2);
    this.meta[ALLOCATED] = records;
    Atomics.store(this.meta, LISTS, lists);
  }
}
