// Memory the search index keeps once per machine: growable SharedArrayBuffers, which every
// thread of the process can read (src/cluster.ts) and which grow in place (no copy, nothing
// moves under a reader). A thread reads one through fixed-length views, remade when the buffer
// has grown: a view that tracks a growable buffer's length is many times slower in V8's
// optimised code (measured: 25x on a summing loop), a fixed-length one is not.

type TypedArray =
  Int8Array | Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;
type TypedArrayOf<T extends TypedArray> = {
  new (buffer: SharedArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
};

/** Growth steps: at least 1 MiB, at least a sixteenth of the size, whole pages. */
const STEP = 1 << 20;

export class Growable {
  readonly sab: SharedArrayBuffer;
  #viewedBytes = -1;
  #views = new Map<unknown, TypedArray>();

  constructor(sab: SharedArrayBuffer) {
    this.sab = sab;
  }

  /** An empty buffer that may grow to `maxBytes` (address space reserved, no memory used). */
  static create(maxBytes: number): Growable {
    return new Growable(new SharedArrayBuffer(0, { maxByteLength: maxBytes }));
  }

  get bytes(): number {
    return this.sab.byteLength;
  }

  /** Makes the buffer at least `bytes` long (the index's writer only). */
  reserve(bytes: number): void {
    const have = this.sab.byteLength;
    if (bytes <= have) return;
    const step = Math.max(STEP, Math.ceil(have / 16));
    const want = Math.min(this.sab.maxByteLength, Math.ceil(Math.max(bytes, have + step) / STEP) * STEP);
    if (want < bytes) {
      throw new RangeError(`the search index outgrew its reserved memory (${this.sab.maxByteLength} bytes)`);
    }
    this.sab.grow(want);
  }

  /** This thread's view of the whole buffer as `Type` (the same object until the buffer grows). */
  view<T extends TypedArray>(Type: TypedArrayOf<T>): T {
    const bytes = this.sab.byteLength;
    if (bytes !== this.#viewedBytes) {
      this.#views.clear();
      this.#viewedBytes = bytes;
    }
    let view = this.#views.get(Type) as T | undefined;
    if (!view) {
      view = new Type(this.sab, 0, Math.floor(bytes / Type.BYTES_PER_ELEMENT));
      this.#views.set(Type, view);
    }
    return view;
  }
}
