// Dot products of one query with many stored embeddings: the inner loop of semantic search
// (tens of thousands of candidates per query at a million listings). The embeddings are 384
// signed bytes each; the query is quantized to 16-bit integers (its own scale, relative error
// below 2e-5), so a dot product is an exact integer sum: the WebAssembly SIMD kernel below and
// the plain JavaScript loop (the fallback, and the reference the tests hold the kernel to)
// give identical results. The kernel does 16 dimensions per step (`i32x4.dot_i16x8_s`), about
// ten times the plain loop. Its source is WebAssembly text, assembled at start-up by wabt.
//
// The embeddings live in a shared WebAssembly memory, one per machine (the search index is
// shared by the threads of src/cluster.ts): each thread runs its own instance of the kernel over
// it, with scratch space of its own (a slot at the start of the memory: the query, the
// candidates' places and their results), and the embeddings after every slot.
import wabtInit from 'wabt';

export const DIMENSIONS = 384;
const PAGE = 65_536;

/** Candidates one call of the kernel takes (more are done in turns). */
const SCRATCH_CANDIDATES = 32_768;
/** A thread's scratch: the query (768 bytes, 1 KiB kept), places and results. */
const SCRATCH_BYTES = Math.ceil((1024 + SCRATCH_CANDIDATES * 8) / PAGE) * PAGE;
/** Scratch slots: one a thread (WORKERS is at most 64; slot 0 is the index's owner). */
export const SCRATCH_SLOTS = 65;
/** Where the embeddings start. */
const BASE = SCRATCH_SLOTS * SCRATCH_BYTES;
/** The memory's most pages: 4 GiB, WebAssembly's 32-bit limit (about 11 million listings). */
const MAX_PAGES = 65_536;

/**
 * `dots(query, positions, count, out, base)`: for each of `count` positions (i32 at
 * `positions`), the dot product of the 384 bytes at `base + position * 384` with the 384 i16 at
 * `query`, as an i32 at `out`.
 */
const WAT = `(module
  (memory (import "env" "memory") 1 ${MAX_PAGES} shared)
  (func (export "dots") (param $query i32) (param $positions i32) (param $count i32) (param $out i32) (param $embeddings i32)
    (local $k i32) (local $base i32) (local $j i32) (local $acc v128) (local $d v128)
    (block $done
      (loop $candidates
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        (local.set $base
          (i32.add (local.get $embeddings)
            (i32.mul (i32.load (i32.add (local.get $positions) (i32.shl (local.get $k) (i32.const 2))))
                     (i32.const ${DIMENSIONS}))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (loop $dims
          (local.set $d (v128.load (i32.add (local.get $base) (local.get $j))))
          (local.set $acc (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $d))
              (v128.load (i32.add (local.get $query) (i32.shl (local.get $j) (i32.const 1)))))))
          (local.set $acc (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $d))
              (v128.load offset=16 (i32.add (local.get $query) (i32.shl (local.get $j) (i32.const 1)))))))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (br_if $dims (i32.lt_u (local.get $j) (i32.const ${DIMENSIONS}))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $candidates)))))`;

async function assemble(): Promise<WebAssembly.Module | undefined> {
  const wabt = await wabtInit();
  const parsed = wabt.parseWat('dot.wat', WAT, { simd: true, threads: true });
  try {
    // wabt's types omit validate's features, which shared memory needs (the default has no threads)
    (parsed.validate as (features: object) => void)({ simd: true, threads: true });
    const { buffer } = parsed.toBinary({});
    return new WebAssembly.Module(new Uint8Array(buffer));
  } finally {
    parsed.destroy();
  }
}

/** The assembled kernel; undefined where WebAssembly SIMD is missing. */
const kernelModule: WebAssembly.Module | undefined = await assemble().catch(() => undefined);

/** A query as the kernels take it: 384 integers and the scale that brings them back. */
export interface QuantizedQuery {
  values: Int16Array;
  scale: number;
}

export function quantizeQuery(query: Float32Array): QuantizedQuery {
  let max = 0;
  for (let i = 0; i < Math.min(query.length, DIMENSIONS); i++) max = Math.max(max, Math.abs(query[i]!));
  const values = new Int16Array(DIMENSIONS);
  if (max === 0) return { values, scale: 0 };
  const scale = max / 32_767;
  for (let i = 0; i < Math.min(query.length, DIMENSIONS); i++) values[i] = Math.round(query[i]! / scale);
  return { values, scale };
}

/** Where the embeddings live, and the dot products over them. */
export interface VectorStore {
  readonly kind: 'wasm' | 'js';
  /** The shared memory the embeddings are in (handed to the other threads). */
  readonly memory: WebAssembly.Memory;
  /** Makes room for `capacity` embeddings (what is stored stays; the index's owner only). */
  reserve(capacity: number): void;
  /** Stores the embedding of position `at` (missing dimensions are zero). */
  set(at: number, bytes: Int8Array): void;
  /** The embedding at `at` (a view: copy it before the store grows). */
  read(at: number): Int8Array;
  /**
   * The integer dot products of the query with the embeddings at `positions[0..count)`, each
   * read at `slots[position]` when `slots` covers it. The result may be a view of scratch
   * memory, valid until the next call: read it at once.
   */
  dots(query: Int16Array, positions: ArrayLike<number>, count: number, slots?: Int32Array): Int32Array;
}

/** The bytes of the first `count` embeddings in `memory`, made room for (a snapshot's). */
export function embeddingBytes(memory: WebAssembly.Memory, count: number): Uint8Array {
  const bytes = BASE + count * DIMENSIONS;
  const have = memory.buffer.byteLength;
  if (bytes > have) memory.grow(Math.ceil((bytes - have) / PAGE));
  return new Uint8Array(memory.buffer, BASE, count * DIMENSIONS);
}

/** A memory for the embeddings of one index: shared, growable to 4 GiB, scratch slots first. */
export function createVectorMemory(): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: BASE / PAGE, maximum: MAX_PAGES, shared: true });
}

abstract class Store {
  readonly memory: WebAssembly.Memory;
  /** This thread's scratch slot. */
  protected readonly scratch: number;
  constructor(memory: WebAssembly.Memory, slot: number) {
    if (slot < 0 || slot >= SCRATCH_SLOTS) throw new RangeError(`no scratch slot ${slot}`);
    this.memory = memory;
    this.scratch = slot * SCRATCH_BYTES;
  }
  reserve(capacity: number): void {
    const bytes = BASE + capacity * DIMENSIONS;
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE));
  }
  set(at: number, bytes: Int8Array): void {
    const data = new Int8Array(this.memory.buffer, BASE + at * DIMENSIONS, DIMENSIONS);
    data.fill(0);
    data.set(bytes.subarray(0, DIMENSIONS));
  }
  read(at: number): Int8Array {
    return new Int8Array(this.memory.buffer, BASE + at * DIMENSIONS, DIMENSIONS);
  }
  dots(query: Int16Array, positions: ArrayLike<number>, count: number, slots?: Int32Array): Int32Array {
    if (count <= SCRATCH_CANDIDATES) return this.dotsInScratch(query, positions, 0, count, slots);
    const out = new Int32Array(count);
    for (let from = 0; from < count; from += SCRATCH_CANDIDATES) {
      const to = Math.min(count, from + SCRATCH_CANDIDATES);
      out.set(this.dotsInScratch(query, positions, from, to, slots), from);
    }
    return out;
  }
  /** The candidates `from..to` (at most SCRATCH_CANDIDATES), their results in scratch. */
  protected abstract dotsInScratch(
    query: Int16Array,
    positions: ArrayLike<number>,
    from: number,
    to: number,
    slots: Int32Array | undefined,
  ): Int32Array;
}

class JsStore extends Store {
  readonly kind = 'js';
  protected dotsInScratch(
    query: Int16Array,
    positions: ArrayLike<number>,
    from: number,
    to: number,
    slots: Int32Array | undefined,
  ): Int32Array {
    const out = new Int32Array(to - from);
    const data = new Int8Array(this.memory.buffer);
    for (let k = from; k < to; k++) {
      const p = positions[k]!;
      const base = BASE + (slots && p < slots.length ? slots[p]! : p) * DIMENSIONS;
      // four sums: about three times faster than one
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let i = 0; i < DIMENSIONS; i += 4) {
        s0 += query[i]! * data[base + i]!;
        s1 += query[i + 1]! * data[base + i + 1]!;
        s2 += query[i + 2]! * data[base + i + 2]!;
        s3 += query[i + 3]! * data[base + i + 3]!;
      }
      out[k - from] = s0 + s1 + s2 + s3;
    }
    return out;
  }
}

class WasmStore extends Store {
  readonly kind = 'wasm';
  private readonly kernel: (
    query: number,
    positions: number,
    count: number,
    out: number,
    base: number,
  ) => void;
  constructor(module: WebAssembly.Module, memory: WebAssembly.Memory, slot: number) {
    super(memory, slot);
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    this.kernel = instance.exports.dots as WasmStore['kernel'];
  }
  protected dotsInScratch(
    query: Int16Array,
    positions: ArrayLike<number>,
    from: number,
    to: number,
    slots: Int32Array | undefined,
  ): Int32Array {
    // this thread's scratch: the query, the places, the results (a view of them is returned: no
    // copy of up to 32,768 results a call)
    const count = to - from;
    const queryAt = this.scratch;
    const positionsAt = queryAt + 1024;
    const outAt = positionsAt + SCRATCH_CANDIDATES * 4;
    const buffer = this.memory.buffer;
    new Int16Array(buffer, queryAt, DIMENSIONS).set(query);
    const at = new Int32Array(buffer, positionsAt, count);
    if (slots) {
      for (let k = 0; k < count; k++) {
        const p = positions[from + k]!;
        at[k] = p < slots.length ? slots[p]! : p;
      }
    } else for (let k = 0; k < count; k++) at[k] = positions[from + k]!;
    this.kernel(queryAt, positionsAt, count, outAt, BASE);
    return new Int32Array(buffer, outAt, count);
  }
}

/**
 * A store on the SIMD kernel where it assembled (unless `js` is asked for), else on the plain
 * loop; over `memory` (a new one by default) with this thread's scratch `slot`.
 */
export function createVectorStore(
  kind: 'wasm' | 'js' = kernelModule ? 'wasm' : 'js',
  memory: WebAssembly.Memory = createVectorMemory(),
  slot = 0,
): VectorStore {
  return kind === 'wasm' && kernelModule
    ? new WasmStore(kernelModule, memory, slot)
    : new JsStore(memory, slot);
}

/** Whether the SIMD kernel is in use (for the readiness log and the tests). */
export const simdKernel = kernelModule !== undefined;
