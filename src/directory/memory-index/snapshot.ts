// The search index written to a file and read back, so a restart does not rebuild it from the
// database (58 s at a million listings). The file is every shared buffer's part in use, in a
// fixed order, behind a header (format, what the index was built from) and before a CRC-32 of
// all of it; written to a temporary file and renamed, so a reader sees a whole file or none.
// A file that is short, of another format or whose CRC differs is not read (the index is then
// built from the database); whether it still matches the database is the caller's to check
// (`identity`: ../vectors.ts).
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
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
/** Bytes one read or write moves at most. */
const STEP = 64 << 20;

/** What the index was built from, as the caller describes it (compared whole on reading). */
export type Identity = Record<string, string | number>;

/** One part of the index in the file: its bytes in use now, and where they go back. */
interface Section {
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
  return { used: () => m.byteLength, target: (bytes) => new Uint8Array(m.buffer, m.byteOffset, bytes) };
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

/** Writes `index` (as it is: call it on the thread that adds to it) to `file`; returns its bytes. */
export function writeSnapshot(index: SharedIndex, file: string, identity: Identity): number {
  const parts = sections(index);
  const lengths = parts.map((p) => p.used());
  const header = Buffer.from(JSON.stringify({ format: FORMAT, identity, lengths }));
  const head = Buffer.alloc(12);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(header.length, 8);
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  let crc = 0;
  let written = 0;
  const put = (bytes: Uint8Array) => {
    for (let at = 0; at < bytes.length; at += STEP) {
      const piece = bytes.subarray(at, Math.min(bytes.length, at + STEP));
      writeSync(fd, piece);
      crc = crc32(piece, crc);
      written += piece.length;
    }
  };
  try {
    put(head);
    put(header);
    parts.forEach((part, k) => put(part.target(lengths[k]!)));
    const tail = Buffer.alloc(4);
    tail.writeUInt32LE(crc >>> 0, 0);
    writeSync(fd, tail);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(temporary, file);
  return written + 4;
}

/** Why a snapshot was not read, or undefined when it was. */
export type Refusal = 'missing' | 'unreadable' | 'format' | 'identity' | 'checksum';

/**
 * Reads `file` into `index` (new and empty: its readers see no listing until the last counter)
 * when it is whole and `identity` accepts what it was built from; else leaves the index as it
 * was, to be built from the database, and says why.
 */
export function readSnapshot(
  index: SharedIndex,
  file: string,
  identity: (stored: Identity) => Promise<boolean> | boolean,
): Promise<Refusal | undefined> {
  return read(index, file, identity);
}

async function read(
  index: SharedIndex,
  file: string,
  identity: (stored: Identity) => Promise<boolean> | boolean,
): Promise<Refusal | undefined> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return 'missing';
  }
  try {
    const total = statSync(file).size;
    const head = Buffer.alloc(12);
    if (readSync(fd, head, 0, 12, 0) !== 12 || head.toString('latin1', 0, 8) !== MAGIC) return 'format';
    const headerLength = head.readUInt32LE(8);
    if (headerLength > total) return 'format';
    const headerBytes = Buffer.alloc(headerLength);
    if (readSync(fd, headerBytes, 0, headerLength, 12) !== headerLength) return 'unreadable';
    let header: { format: number; identity: Identity; lengths: number[] };
    try {
      header = JSON.parse(headerBytes.toString('utf8')) as typeof header;
    } catch {
      return 'format';
    }
    if (header.format !== FORMAT || !Array.isArray(header.lengths)) return 'format';
    const parts = sections(index);
    const body = header.lengths.reduce((a, b) => a + b, 0);
    if (header.lengths.length !== parts.length || 12 + headerLength + body + 4 !== total) return 'format';
    if (!(await identity(header.identity))) return 'identity';
    // the whole file checked first: the index is shared, so nothing is put in it unless it is whole
    let crc = crc32(headerBytes, crc32(head));
    const scratch = Buffer.alloc(Math.min(STEP, Math.max(1, body)));
    for (let at = 0; at < body; at += scratch.length) {
      const length = Math.min(scratch.length, body - at);
      if (readSync(fd, scratch, 0, length, 12 + headerLength + at) !== length) return 'unreadable';
      crc = crc32(scratch.subarray(0, length), crc);
    }
    const tail = Buffer.alloc(4);
    if (readSync(fd, tail, 0, 4, 12 + headerLength + body) !== 4 || tail.readUInt32LE(0) !== crc >>> 0) {
      return 'checksum';
    }
    let position = 12 + headerLength;
    for (let k = 0; k < parts.length; k++) {
      const bytes = header.lengths[k]!;
      const into = parts[k]!.target(bytes);
      for (let at = 0; at < bytes; at += STEP) {
        const piece = into.subarray(at, Math.min(bytes, at + STEP));
        if (readSync(fd, piece, 0, piece.length, position) !== piece.length) return 'unreadable';
        position += piece.length;
      }
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}
