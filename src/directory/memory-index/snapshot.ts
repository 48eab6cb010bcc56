// The search index written to a file and read back, so a restart does not rebuild it from the
// database (58 s at a million listings). The file is every shared buffer's part in use, in a
// fixed order, behind a header (format, what the index was built from) and before a CRC-32 of
// all of it; written to a temporary file and renamed, so a reader sees a whole file or none.
// A file that is short, of another format or whose CRC differs is not read (the index is then
// built from the database); whether it still matches the database is the caller's to check
// (`identity`: ../vectors.ts).
//
// Both ways go in pieces through the thread pool (no per-entry decoding: each part's bytes go
// straight to and from its shared buffer), the CRC summed on this thread between them, so
// neither holds the thread that serves requests for more than a piece's CRC (1.2 GB at a
// million listings). Reading, a few pieces are in flight at once and the caller's check of the
// database runs beside them; the structures' counters, which publish what their parts hold,
// are put in last, once the whole file is known good: until then no reader sees any of it, and
// a file refused half way leaves the index as it was.
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { CHUNK } from '../keywords/postings.ts';
import { embeddingBytes } from '../dot.ts';
import type { Growable } from './growable.ts';
import type { Lists } from './lists.ts';
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
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return 'missing';
  }
  try {
    return await read(index, fh, identity);
  } finally {
    await fh.close();
  }
}

async function read(
  index: SharedIndex,
  fh: FileHandle,
  identity: (stored: Identity) => Promise<boolean> | boolean,
): Promise<Refusal | undefined> {
  const total = (await fh.stat()).size;
  const head = Buffer.alloc(12);
  if ((await fh.read(head, 0, 12, 0)).bytesRead !== 12 || head.toString('latin1', 0, 8) !== MAGIC) {
    return 'format';
  }
  const headerLength = head.readUInt32LE(8);
  if (headerLength > total) return 'format';
  const headerBytes = Buffer.alloc(headerLength);
  if ((await fh.read(headerBytes, 0, headerLength, 12)).bytesRead !== headerLength) return 'unreadable';
  let header: { format: number; identity: Identity; lengths: number[] };
  try {
    header = JSON.parse(headerBytes.toString('utf8')) as typeof header;
  } catch {
    return 'format';
  }
  if (header.format !== FORMAT || !Array.isArray(header.lengths)) return 'format';
  const lengths = header.lengths;
  const parts = sections(index);
  if (lengths.length !== parts.length || !lengths.every((n) => Number.isSafeInteger(n) && n >= 0)) {
    return 'format';
  }
  const body = lengths.reduce((a, b) => a + b, 0);
  if (12 + headerLength + body + 4 !== total) return 'format';
  // the database is asked while the file is read (a rejection is kept for after)
  const accepted = Promise.resolve()
    .then(() => identity(header.identity))
    .then(
      (ok) => ({ ok }),
      (err: unknown) => ({ err }),
    );
  // what each part held before (a new index's few bytes), to put back if the file is refused
  const before = parts.map((p) => (p.counters ? undefined : p.target(p.used()).slice()));
  const into = parts.map((p, k) => (p.counters ? new Uint8Array(lengths[k]!) : p.target(lengths[k]!)));
  const restore = () => {
    parts.forEach((p, k) => {
      const kept = before[k];
      if (!kept) return;
      into[k]!.fill(0);
      p.target(kept.length).set(kept);
    });
  };
  const pieces: { view: Uint8Array; position: number }[] = [];
  let position = 12 + headerLength;
  for (const view of into) {
    for (let at = 0; at < view.length; at += PIECE) {
      const piece = view.subarray(at, Math.min(view.length, at + PIECE));
      pieces.push({ view: piece, position });
      position += piece.length;
    }
  }
  const tail = Buffer.alloc(4);
  pieces.push({ view: tail, position });
  const reads: Promise<number>[] = [];
  const issue = () => {
    const { view, position } = pieces[reads.length]!;
    reads.push(readAll(fh, view, position));
  };
  let crc = crc32(headerBytes, crc32(head));
  let refusal: Refusal | undefined;
  for (let k = 0; k < pieces.length && !refusal; k++) {
    while (reads.length < pieces.length && reads.length < k + DEPTH) issue();
    const { view } = pieces[k]!;
    const got = await reads[k]!.catch(() => -1);
    if (got !== view.length) refusal = 'unreadable';
    else if (k < pieces.length - 1) crc = crc32(view, crc);
    else if (tail.readUInt32LE(0) !== crc >>> 0) refusal = 'checksum';
  }
  // nothing may still be written into the index once it is put back
  await Promise.allSettled(reads);
  const answer = await accepted;
  if ('err' in answer) {
    restore();
    throw answer.err;
  }
  if (!refusal && !answer.ok) refusal = 'identity';
  if (refusal) {
    restore();
    return refusal;
  }
  parts.forEach((p, k) => {
    if (p.counters) p.target(lengths[k]!).set(into[k]!);
  });
  return undefined;
}

/** Fills `view` from `position`; the bytes read (fewer at the file's end). */
async function readAll(fh: FileHandle, view: Uint8Array, position: number): Promise<number> {
  let done = 0;
  while (done < view.length) {
    const { bytesRead } = await fh.read(view, done, view.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}
