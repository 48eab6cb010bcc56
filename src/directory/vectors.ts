// The semantic side of search: the listings' embeddings (stored in `listings.embedding` as a
// float32 scale and 384 signed bytes), held in memory per process and caught up by sequence
// number before each query, so every instance sees every listing the database has. Exact
// (brute-force) similarity: about 8 M multiply-adds for 20,000 listings, a few milliseconds.
//
// Why not pgvector: PGlite 0.5 ships no `vector` extension, and extensions in PGlite must be
// loaded when the database is opened; one SQL for both storage paths rules it out. With
// PostgreSQL at scale, a pgvector HNSW index can replace this module behind `similarities`.
import type { Queryable } from '../platform/db.ts';

interface Index {
  maxSeq: number;
  seqs: number[];
  scales: number[];
  vectors: Int8Array[];
}

const indexes = new WeakMap<object, Index>();

function indexOf(db: object): Index {
  let index = indexes.get(db);
  if (!index) {
    index = { maxSeq: 0, seqs: [], scales: [], vectors: [] };
    indexes.set(db, index);
  }
  return index;
}

/** Loads the embeddings of listings added since the last call. */
export async function refreshVectors(db: Queryable): Promise<void> {
  const index = indexOf(db);
  for (;;) {
    const rows = await db.query<{ seq: number; embedding: Uint8Array }>(
      'select seq, embedding from listings where seq > $1 order by seq limit 20000',
      [index.maxSeq],
    );
    for (const row of rows) {
      const bytes = row.embedding;
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      index.seqs.push(Number(row.seq));
      index.scales.push(view.getFloat32(0, true));
      index.vectors.push(new Int8Array(bytes.buffer, bytes.byteOffset + 4, bytes.byteLength - 4));
      index.maxSeq = Math.max(index.maxSeq, Number(row.seq));
    }
    if (rows.length < 20000) return;
  }
}

function dot(query: Float32Array, scale: number, vector: Int8Array): number {
  let sum = 0;
  const n = Math.min(query.length, vector.length);
  for (let i = 0; i < n; i++) sum += (query[i] ?? 0) * (vector[i] ?? 0);
  return Math.round(sum * scale * 1e6) / 1e6;
}

/**
 * The listings (up to sequence `snapshot`) similar enough to `query`: at least `floor`, and at
 * least `relative` times the best similarity in the directory, so a query about plumbing keeps
 * plumbers and leaves out the other building trades that share part of its direction.
 */
export function similarities(
  db: object,
  query: Float32Array,
  snapshot: number,
  options: { floor?: number; relative?: number } = {},
): { seqs: number[]; sims: number[] } {
  const index = indexOf(db);
  const all: number[] = new Array<number>(index.seqs.length);
  let best = 0;
  for (let i = 0; i < index.seqs.length; i++) {
    if ((index.seqs[i] ?? 0) > snapshot) {
      all[i] = -1;
      continue;
    }
    const s = dot(query, index.scales[i] ?? 0, index.vectors[i] as Int8Array);
    all[i] = s;
    if (s > best) best = s;
  }
  const threshold = Math.max(options.floor ?? 0.2, (options.relative ?? 0.7) * best);
  const seqs: number[] = [];
  const sims: number[] = [];
  for (let i = 0; i < all.length; i++) {
    if ((all[i] ?? -1) >= threshold) {
      seqs.push(index.seqs[i] ?? 0);
      sims.push(all[i] ?? 0);
    }
  }
  return { seqs, sims };
}

/** The similarity of `query` to the listings with these sequence numbers (0 when unknown). */
export function similarityOf(db: object, query: Float32Array, seqs: number[]): Map<number, number> {
  const index = indexOf(db);
  const wanted = new Set(seqs);
  const out = new Map<number, number>();
  for (let i = 0; i < index.seqs.length && out.size < wanted.size; i++) {
    const seq = index.seqs[i] ?? 0;
    if (wanted.has(seq)) out.set(seq, dot(query, index.scales[i] ?? 0, index.vectors[i] as Int8Array));
  }
  return out;
}
