// The search index written to a file and read back, so a restart does not rebuild it from the
// database (58 s at a million listings). The file is every shared buffer's part in use, in a
// fixed order, behind a header (format, what the index was built from) and before a CRC-32 of
// all of it; written to a temporary file and renamed, so a reader sees a whole file or none.
// A file that is short, of another format or whose CRC differs is not read (the index is then
// built from the database); whether it still matches the database is the caller's to check
// (`identity`: ../vectors.ts).
//
// Both ways go in pieces (no per-entry decoding: each part's bytes go straight to and from its
// shared buffer). Writing, through the thread pool, the CRC summed between pieces, so requests
// are served meanwhile. Reading, on a thread of its own (read-worker.ts), a few pieces in flight
// at once, begun as the index is opened (`prefetchSnapshot`), so the rest of a start-up and the
// caller's check of the database go on beside it; the structures' counters, which publish what
// their parts hold, are put in last, once the whole file is known good: until then no reader
// sees any of it, and a refused file leaves the index as it was.
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import { CHUNK } from '../keywords/postings.ts';
import { embeddingBytes } from '../dot.ts';
import type { Growable } from './growable.ts';
import type { Lists } from './lists.ts';
import type { Piece, ReadJob, ReadOutcome } from './read-worker.ts';
import { COLUMNS, type ColumnName, type SharedIndex } from './shared-index.ts';
import type { Dictionary, Texts } from './strings.ts';

/** Bump when any structure's layout in memory-index/ or what the load stores changes. */
const FORMAT = 1;
const MAGIC = 'EURUSIDX';
/** Bytes one read or write moves at most: a piece's CRC is a few milliseconds of this thread. */
const PIECE = 8 << 20;
/** Reads in flight at once (the thread pool has four threads). */
const DEPTH = 4;

/** What the index was built from, as the caller describes it (compared whole on reading). */
export type Identity = Record<string, string | number>;

/** One part of the index in the file: its bytes in use now, and where they go back. */
interface Section {
  /** counters that publish what the other parts hold: put in after the rest (`meta`) */
  counters?: boolean;
  used(): number;
  /** A view of `bytes` bytes at the part's start, made room for. */
  target(bytes: number): Uint8Array;
}

function growable(g: Growable, used: () => number): Section {
  return {
    used,
    target(bytes) {
      g.reserve(bytes);
      return new Uint8Array(g.sab, 0, bytes);
    },
  };
}

/** A structure's counters: after its other parts, so they never count bytes not yet read. */
function meta(m: Int32Array): Section {
  return {
    counters: true,
    used: () => m.byteLength,
    target: (bytes) => new Uint8Array(m.buffer, m.byteOffset, bytes),
  };
}

function texts(t: Texts): Section[] {
  const { units, starts } = t.buffers();
  return [growable(units, () => t.extent().units), growable(starts, () => t.extent().starts), meta(t.meta)];
}

function dictionary(d: Dictionary): Section[] {
  const { table } = d.liveTable();
  return [
    ...texts(d.texts),
    growable(table, () => {
      const { bits, at } = d.liveTable();
      return (at + (1 << bits)) * 4;
    }),
    meta(d.meta),
  ];
}

function lists(l: Lists): Section[] {
  const { entries, data, codes } = l.extent();
  const sections = [
    growable(entries, () => l.extent().lists * 12),
    growable(data, () => l.extent().records * l.width * 4),
  ];
  if (codes) sections.push(growable(codes, () => l.extent().records * 2));
  sections.push(meta(l.meta));
  return sections;
}

/** Every part of `index`, in the file's order: the index's own counters last. */
function sections(index: SharedIndex): Section[] {
  const size = () => index.size;
  const columns = (Object.keys(COLUMNS) as ColumnName[]).map((name) =>
    growable(index.columnBuffers[name], () => {
      const count =
        name === 'slots' ? index.slotted : name === 'order' ? index.reading().baseOrder.size : size();
      return count * COLUMNS[name].BYTES_PER_ELEMENT;
    }),
  );
  const keywords = index.keywords;
  const { pool } = keywords.poolExtent();
  return [
    ...columns,
    { used: () => size() * 384, target: (bytes) => embeddingBytes(index.memory, bytes / 384) },
    ...texts(index.ids),
    ...dictionary(index.countries),
    ...dictionary(index.cities),
    ...dictionary(index.codes),
    ...lists(index.byCode),
    ...dictionary(keywords.lexemes),
    ...lists(keywords.lists),
    growable(pool, () => {
      const { chunks, used } = keywords.poolExtent();
      return chunks === 0 ? 0 : ((chunks - 1) * CHUNK + used) * 2;
    }),
    meta(keywords.meta),
    meta(index.meta),
  ];
}

export interface WriteOptions {
  /** bytes a piece holds (tests: small, to see requests served between pieces) */
  piece?: number;
}

/**
 * Writes `index` to `file`; returns its bytes. The index must not change until this resolves
 * (the caller holds its loads back: ../index-snapshot.ts): what is written is the parts in use
 * when it was called.
 */
export async function writeSnapshot(
  index: SharedIndex,
  file: string,
  identity: Identity,
  options: WriteOptions = {},
): Promise<number> {
  const step = options.piece ?? PIECE;
  const parts = sections(index);
  const lengths = parts.map((p) => p.used());
  const views = parts.map((p, k) => p.target(lengths[k]!));
  const header = Buffer.from(JSON.stringify({ format: FORMAT, identity, lengths }));
  const head = Buffer.alloc(12);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(header.length, 8);
  const temporary = `${file}.${process.pid}.tmp`;
  const fh = await open(temporary, 'w', 0o600);
  let crc = 0;
  let position = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const put = async (bytes: Uint8Array) => {
    for (let at = 0; at < bytes.length; at += step) {
      const piece = bytes.subarray(at, Math.min(bytes.length, at + step));
      crc = crc32(piece, crc); // while the piece before is written
      await writing;
      writing = writeAll(fh, piece, position);
      position += piece.length;
    }
  };
  try {
    await put(head);
    await put(header);
    for (const view of views) await put(view);
    await writing;
    const tail = Buffer.alloc(4);
    tail.writeUInt32LE(crc >>> 0, 0);
    await writeAll(fh, tail, position);
    await fh.sync();
  } catch (err) {
    await writing.catch(() => undefined);
    await fh.close();
    await rm(temporary, { force: true });
    throw err;
  }
  await fh.close();
  await rename(temporary, file);
  return position + 4;
}

async function writeAll(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

/** Why a snapshot was not read, or undefined when it was. */
export type Refusal = 'missing' | 'unreadable' | 'format' | 'identity' | 'checksum';

/** A snapshot being read into an index: its header, and its parts as they come. */
interface Reading {
  identity: Identity;
  /** every part read and the CRC matched, or why not (the index written no more either way) */
  body: Promise<Refusal | undefined>;
  /** puts back what the index held before (a refused file) */
  restore(): void;
  /** publishes what was read (the counters, in the file's order) */
  commit(): void;
}

/** Reads begun ahead of the load (`prefetchSnapshot`), by index. */
const ahead = new WeakMap<SharedIndex, { file: string; reading: Promise<Reading | Refusal> }>();

/**
 * Begins reading `file` into `index` (new and empty) on a thread of its own, before the caller
 * knows whether it will be used: a start-up goes on with its other work meanwhile, and
 * `readSnapshot` takes it over. Nothing of it is visible to readers until then.
 */
export function prefetchSnapshot(index: SharedIndex, file: string): void {
  if (!ahead.has(index)) ahead.set(index, { file, reading: begin(index, file) });
}

/**
 * Reads `file` into `index` (new and empty: its readers see no listing until the last counter)
 * when it is whole and `identity` accepts what it was built from (asked while the file is read);
 * else leaves the index as it was, to be built from the database, and says why.
 */
export async function readSnapshot(
  index: SharedIndex,
  file: string,
  identity: (stored: Identity) => Promise<boolean> | boolean,
): Promise<Refusal | undefined> {
  const early = ahead.get(index);
  ahead.delete(index);
  if (early && early.file !== file) {
    const old = await early.reading;
    if (typeof old !== 'string') {
      await old.body;
      old.restore();
    }
  }
  const reading = await (early?.file === file ? early.reading : begin(index, file));
  if (typeof reading === 'string') return reading;
  let accepted: boolean;
  try {
    accepted = await identity(reading.identity);
  } catch (err) {
    await reading.body;
    reading.restore();
    throw err;
  }
  const refusal = (await reading.body) ?? (accepted ? undefined : 'identity');
  if (refusal) {
    reading.restore();
    return refusal;
  }
  reading.commit();
  return undefined;
}

/** Checks the header and sets the parts reading (read-worker.ts); or why the file is refused. */
async function begin(index: SharedIndex, file: string): Promise<Reading | Refusal> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return 'missing';
  }
  let header: { format: number; identity: Identity; lengths: number[] };
  let headerLength: number;
  /** the CRC of the head and header */
  let crc: number;
  const head = Buffer.alloc(12);
  const tail = Buffer.alloc(4);
  try {
    const total = (await fh.stat()).size;
    if ((await fh.read(head, 0, 12, 0)).bytesRead !== 12 || head.toString('latin1', 0, 8) !== MAGIC) {
      return 'format';
    }
    headerLength = head.readUInt32LE(8);
    if (headerLength > total) return 'format';
    const headerBytes = Buffer.alloc(headerLength);
    if ((await fh.read(headerBytes, 0, headerLength, 12)).bytesRead !== headerLength) return 'unreadable';
    try {
      header = JSON.parse(headerBytes.toString('utf8')) as typeof header;
    } catch {
      return 'format';
    }
    if (header.format !== FORMAT || !Array.isArray(header.lengths)) return 'format';
    if (header.lengths.length !== sections(index).length) return 'format';
    if (!header.lengths.every((n) => Number.isSafeInteger(n) && n >= 0)) return 'format';
    const body = header.lengths.reduce((a, b) => a + b, 0);
    if (12 + headerLength + body + 4 !== total) return 'format';
    if ((await fh.read(tail, 0, 4, total - 4)).bytesRead !== 4) return 'unreadable';
    crc = crc32(headerBytes, crc32(head));
  } finally {
    await fh.close();
  }
  const lengths = header.lengths;
  const parts = sections(index);
  // what each part held before (a new index's few bytes), to put back if the file is refused
  const before = parts.map((p) => (p.counters ? undefined : p.target(p.used()).slice()));
  const into = parts.map((p, k) =>
    p.counters ? new Uint8Array(new SharedArrayBuffer(lengths[k]!)) : p.target(lengths[k]!),
  );
  const pieces: Piece[] = [];
  let position = 12 + headerLength;
  for (const view of into) {
    for (let at = 0; at < view.length; at += PIECE) {
      const length = Math.min(PIECE, view.length - at);
      pieces.push({
        buffer: view.buffer as SharedArrayBuffer,
        offset: view.byteOffset + at,
        length,
        position,
      });
      position += length;
    }
  }
  const job: ReadJob = { file, pieces, crc, depth: DEPTH };
  const body = new Promise<Refusal | undefined>((resolve) => {
    const worker = new Worker(new URL('./read-worker.ts', import.meta.url), { workerData: job });
    let outcome: ReadOutcome | undefined;
    worker.once('message', (m: ReadOutcome) => (outcome = m));
    worker.once('error', (err) => (outcome ??= { unreadable: String(err) }));
    // settled once the thread has ended: it writes nothing into the index after
    worker.once('exit', () => {
      if (!outcome || 'unreadable' in outcome) resolve('unreadable');
      else resolve(outcome.crc >>> 0 === tail.readUInt32LE(0) ? undefined : 'checksum');
    });
  });
  return {
    identity: header.identity,
    body,
    restore() {
      parts.forEach((p, k) => {
        const kept = before[k];
        if (!kept) return;
        into[k]!.fill(0);
        p.target(kept.length).set(kept);
      });
    },
    commit() {
      parts.forEach((p, k) => {
        if (p.counters) p.target(lengths[k]!).set(into[k]!);
      });
    },
  };
}
