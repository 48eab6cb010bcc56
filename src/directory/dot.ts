// Dot products of one query with many stored embeddings: the inner loop of semantic search
// (tens of thousands of candidates per query at a million listings). The embeddings are 384
// signed bytes each; the query is quantized to 16-bit integers (its own scale, relative error
// below 2e-5), so a dot product is an exact integer sum: the WebAssembly SIMD kernel below and
// the plain JavaScript loop (the fallback, and the reference the tests hold the kernel to)
// give identical results. The kernel does 16 dimensions per step (`i32x4.dot_i16x8_s`), about
// ten times the plain loop. Its source is WebAssembly text, assembled at start-up by wabt.
import wabtInit from 'wabt';

export const DIMENSIONS = 384;
const PAGE = 65_536;

/**
 * `dots(query, positions, count, out)`: for each of `count` positions (i32 at `positions`),
 * the dot product of the 384 bytes at `position * 384` with the 384 i16 at `query`, as an
 * i32 at `out`. The embeddings start at address 0.
 */
const WAT = `(module
  (memory (import "env" "memory") 1)
  (func (export "dots") (param $query i32) (param $positions i32) (param $count i32) (param $out i32)
    (local $k i32) (local $base i32) (local $j i32) (local $acc v128) (local $d v128)
    (block $done
      (loop $candidates
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        (local.set $base
          (i32.mul (i32.load (i32.add (local.get $positions) (i32.shl (local.get $k) (i32.const 2))))
                   (i32.const ${DIMENSIONS})))
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
  const parsed = wabt.parseWat('dot.wat', WAT, { simd: true });
  try {
    parsed.validate();
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
  /** Makes room for `capacity` embeddings (what is stored stays). */
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

class JsStore implements VectorStore {
  readonly kind = 'js';
  private data = new Int8Array(0);
  reserve(capacity: number): void {
    if (capacity * DIMENSIONS <= this.data.length) return;
    const data = new Int8Array(capacity * DIMENSIONS);
    data.set(this.data);
    this.data = data;
  }
  set(at: number, bytes: Int8Array): void {
    this.data.fill(0, at * DIMENSIONS, (at + 1) * DIMENSIONS);
    this.data.set(bytes.subarray(0, DIMENSIONS), at * DIMENSIONS);
  }
  read(at: number): Int8Array {
    return this.data.subarray(at * DIMENSIONS, (at + 1) * DIMENSIONS);
  }
  dots(query: Int16Array, positions: ArrayLike<number>, count: number, slots?: Int32Array): Int32Array {
    const out = new Int32Array(count);
    const data = this.data;
    for (let k = 0; k < count; k++) {
      const p = positions[k]!;
      const base = (slots && p < slots.length ? slots[p]! : p) * DIMENSIONS;
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
      out[k] = s0 + s1 + s2 + s3;
    }
    return out;
  }
}

class WasmStore implements VectorStore {
  readonly kind = 'wasm';
  private readonly memory = new WebAssembly.Memory({ initial: 1, maximum: PAGE });
  private readonly kernel: (query: number, positions: number, count: number, out: number) => void;
  private capacity = 0;
  constructor(module: WebAssembly.Module) {
    const instance = new WebAssembly.Instance(module, { env: { memory: this.memory } });
    this.kernel = instance.exports.dots as WasmStore['kernel'];
  }
  /** Grows the memory to hold `bytes` (a grow detaches the old buffer: views are made per use). */
  private ensure(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE));
  }
  reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    this.ensure(capacity * DIMENSIONS);
    this.capacity = capacity;
  }
  set(at: number, bytes: Int8Array): void {
    const data = new Int8Array(this.memory.buffer, at * DIMENSIONS, DIMENSIONS);
    data.fill(0);
    data.set(bytes.subarray(0, DIMENSIONS));
  }
  read(at: number): Int8Array {
    return new Int8Array(this.memory.buffer, at * DIMENSIONS, DIMENSIONS);
  }
  dots(query: Int16Array, positions: ArrayLike<number>, count: number, slots?: Int32Array): Int32Array {
    // scratch after the embeddings: the query, the positions, the results (a view of it is
    // returned: no copy of up to 150,000 results a search)
    const queryAt = this.capacity * DIMENSIONS;
    const positionsAt = queryAt + DIMENSIONS * 2;
    const outAt = positionsAt + count * 4;
    this.ensure(outAt + count * 4);
    const buffer = this.memory.buffer;
    new Int16Array(buffer, queryAt, DIMENSIONS).set(query);
    const at = new Int32Array(buffer, positionsAt, count);
    if (slots) {
      for (let k = 0; k < count; k++) {
        const p = positions[k]!;
        at[k] = p < slots.length ? slots[p]! : p;
      }
    } else for (let k = 0; k < count; k++) at[k] = positions[k]!;
    this.kernel(queryAt, positionsAt, count, outAt);
    return new Int32Array(buffer, outAt, count);
  }
}

/** A store on the SIMD kernel where it assembled (unless `js` is asked for), else on the plain loop. */
export function createVectorStore(kind: 'wasm' | 'js' = kernelModule ? 'wasm' : 'js'): VectorStore {
  return kind === 'wasm' && kernelModule ? new WasmStore(kernelModule) : new JsStore();
}

/** Whether the SIMD kernel is in use (for the readiness log and the tests). */
export const simdKernel = kernelModule !== undefined;
