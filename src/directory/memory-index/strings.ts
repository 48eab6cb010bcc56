// Strings in shared memory, for the search index's dictionaries (lexemes, NACE codes, cities,
// countries) and its listing ids: each string's UTF-16 code units in one buffer, numbered in the
// order they were added. A dictionary also keeps an open-addressing hash table from a string to
// its number, in shared memory too, so a thread looks a word up without a copy of the
// dictionary of its own.
//
// One thread writes (the index's owner), any number read. Publication is by Atomics: the
// writer stores a string's code units and start before it stores its slot in the table or the
// count, so a reader that loads those sees the rest. A table that fills up is rehashed into a
// new region and the header switched at once; the old region is never written again, so a
// reader still probing it finds what it held.
import { Growable } from './growable.ts';

/** Where a buffer reserves address space for: 2 GiB of text, 512 MiB of table. */
const MAX_TEXT_BYTES = 2 ** 31;
const MAX_TABLE_BYTES = 2 ** 29;

export interface TextsHandles {
  units: SharedArrayBuffer;
  starts: SharedArrayBuffer;
  meta: SharedArrayBuffer;
}

/** meta: [count, units used] */
const COUNT = 0;
const USED = 1;

/** Strings by number, appended only. */
export class Texts {
  readonly #units: Growable;
  /** starts[i]: the first code unit of string i; starts[count]: the end of the last */
  readonly #starts: Growable;
  readonly meta: Int32Array;

  constructor(handles?: TextsHandles) {
    this.#units = handles ? new Growable(handles.units) : Growable.create(MAX_TEXT_BYTES);
    this.#starts = handles ? new Growable(handles.starts) : Growable.create(MAX_TEXT_BYTES);
    this.meta = new Int32Array(handles?.meta ?? new SharedArrayBuffer(16));
    if (!handles) {
      this.#starts.reserve(8);
    }
  }

  handles(): TextsHandles {
    return { units: this.#units.sab, starts: this.#starts.sab, meta: this.meta.buffer as SharedArrayBuffer };
  }

  /** The strings published. */
  get count(): number {
    return Atomics.load(this.meta, COUNT);
  }

  /** Appends `text`, returns its number (the writer; `publish` makes it visible). */
  push(text: string): number {
    const n = this.meta[COUNT]!;
    const used = this.meta[USED]!;
    this.#units.reserve((used + text.length) * 2);
    this.#starts.reserve((n + 2) * 8);
    const units = this.#units.view(Uint16Array);
    for (let k = 0; k < text.length; k++) units[used + k] = text.charCodeAt(k);
    const starts = this.#starts.view(Float64Array);
    starts[n] = used;
    starts[n + 1] = used + text.length;
    this.meta[USED] = used + text.length;
    Atomics.store(this.meta, COUNT, n + 1);
    return n;
  }

  /** String `i` (any published number). */
  at(i: number): string {
    const starts = this.#starts.view(Float64Array);
    return decode(this.#units.view(Uint16Array), starts[i]!, starts[i + 1]!);
  }

  /** Whether string `i` is `text`, without making a string. */
  equals(i: number, text: string): boolean {
    const starts = this.#starts.view(Float64Array);
    const from = starts[i]!;
    if (starts[i + 1]! - from !== text.length) return false;
    const units = this.#units.view(Uint16Array);
    for (let k = 0; k < text.length; k++) if (units[from + k] !== text.charCodeAt(k)) return false;
    return true;
  }

  /** The bytes a snapshot keeps: code units and starts in use. */
  extent(): { units: number; starts: number } {
    return { units: this.meta[USED]! * 2, starts: (this.meta[COUNT]! + 1) * 8 };
  }

  buffers(): { units: Growable; starts: Growable } {
    return { units: this.#units, starts: this.#starts };
  }
}

function decode(units: Uint16Array, from: number, to: number): string {
  if (to - from <= 64)
    return String.fromCharCode.apply(null, units.subarray(from, to) as unknown as number[]);
  let out = '';
  for (let k = from; k < to; k += 4096) {
    out += String.fromCharCode.apply(null, units.subarray(k, Math.min(to, k + 4096)) as unknown as number[]);
  }
  return out;
}

/** FNV-1a over the code units. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

export interface DictionaryHandles {
  texts: TextsHandles;
  table: SharedArrayBuffer;
  meta: SharedArrayBuffer;
}

/** meta: [log2 of the table's size]; a table of 2^b slots starts at slot 2^b - 64 (after the smaller ones). */
const TABLE_BITS = 0;
const FIRST_BITS = 6;

function tableAt(bits: number): number {
  return (1 << bits) - (1 << FIRST_BITS);
}

/**
 * A dictionary: strings numbered 0, 1, 2... in the order added, looked up through a shared hash
 * table (slots hold number + 1, 0 empty; half full at most). Readable like a Map. The table's
 * size is one number in shared memory and its place follows from it, so a reader loads one
 * value and has both.
 */
export class Dictionary {
  readonly texts: Texts;
  readonly #table: Growable;
  readonly meta: Int32Array;

  constructor(handles?: DictionaryHandles) {
    this.texts = new Texts(handles?.texts);
    this.#table = handles ? new Growable(handles.table) : Growable.create(MAX_TABLE_BYTES);
    this.meta = new Int32Array(handles?.meta ?? new SharedArrayBuffer(8));
    if (!handles) {
      this.#table.reserve((1 << FIRST_BITS) * 4);
      Atomics.store(this.meta, TABLE_BITS, FIRST_BITS);
    }
  }

  handles(): DictionaryHandles {
    return {
      texts: this.texts.handles(),
      table: this.#table.sab,
      meta: this.meta.buffer as SharedArrayBuffer,
    };
  }

  get size(): number {
    return this.texts.count;
  }

  /** The number of `text`, or undefined. */
  get(text: string): number | undefined {
    const bits = Atomics.load(this.meta, TABLE_BITS);
    const at = tableAt(bits);
    const mask = (1 << bits) - 1;
    const table = this.#table.view(Int32Array);
    const count = this.texts.count;
    for (let i = hashOf(text) & mask; ; i = (i + 1) & mask) {
      const slot = Atomics.load(table, at + i);
      if (slot === 0) return undefined;
      // a number the count does not cover yet is the writer's, still being added
      if (slot <= count && this.texts.equals(slot - 1, text)) return slot - 1;
    }
  }

  has(text: string): boolean {
    return this.get(text) !== undefined;
  }

  /** The number of `text`, added when new (the writer). */
  idOf(text: string): number {
    const known = this.get(text);
    if (known !== undefined) return known;
    const id = this.texts.count;
    let bits = this.meta[TABLE_BITS]!;
    if ((id + 1) * 2 > 1 << bits) {
      bits++;
      this.#table.reserve((tableAt(bits) + (1 << bits)) * 4);
      for (let old = 0; old < id; old++) this.#place(this.texts.at(old), old, bits);
      Atomics.store(this.meta, TABLE_BITS, bits); // the old table is never written again
    }
    this.texts.push(text);
    this.#place(text, id, bits);
    return id;
  }

  /** String `id`. */
  at(id: number): string {
    return this.texts.at(id);
  }

  *keys(): IterableIterator<string> {
    const count = this.texts.count;
    for (let id = 0; id < count; id++) yield this.texts.at(id);
  }

  #place(text: string, id: number, bits: number): void {
    const at = tableAt(bits);
    const mask = (1 << bits) - 1;
    const table = this.#table.view(Int32Array);
    let i = hashOf(text) & mask;
    while (table[at + i] !== 0) i = (i + 1) & mask;
    Atomics.store(table, at + i, id + 1);
  }

  /** The live table: its size in bits, and the buffer it is in (a snapshot keeps that region). */
  liveTable(): { bits: number; at: number; table: Growable } {
    const bits = this.meta[TABLE_BITS]!;
    return { bits, at: tableAt(bits), table: this.#table };
  }

  /** Sets the live table from a snapshot (a new dictionary, before any reader). */
  restoreTable(bits: number): void {
    this.#table.reserve((tableAt(bits) + (1 << bits)) * 4);
    Atomics.store(this.meta, TABLE_BITS, bits);
  }
}
