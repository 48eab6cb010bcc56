// Sample-rate conversion by windowed-sinc interpolation (a Blackman window, 16 zero crossings a
// side), low-passed below the lower Nyquist frequency so downsampling does not alias. Streaming:
// `push` may be called with pieces of any length; the output is the same as for one piece.

const ZERO_CROSSINGS = 12;
/** Fractional positions the kernel is tabulated at (nearest is used: error below 16-bit noise). */
const PHASES = 512;

export class Resampler {
  readonly #ratio: number; // input samples per output sample
  readonly #cutoff: number; // of the input's Nyquist, 0..1
  readonly #half: number; // taps a side, in input samples
  readonly #table: Float32Array; // PHASES rows of 2 * half taps
  #buffer = new Float32Array(0);
  /** The input index (counting the `half` zeros before the first sample) of #buffer[0]. */
  #origin = 0;
  /** Outputs made so far: output n is at input index half + n * ratio, whatever the pieces were. */
  #emitted = 0;

  readonly from: number;
  readonly to: number;

  constructor(from: number, to: number) {
    this.from = from;
    this.to = to;
    this.#ratio = from / to;
    this.#cutoff = Math.min(1, to / from) * 0.94;
    this.#half = Math.ceil(ZERO_CROSSINGS / this.#cutoff);
    const half = this.#half;
    this.#table = new Float32Array(PHASES * 2 * half);
    for (let p = 0; p < PHASES; p++) {
      const frac = p / PHASES;
      for (let k = -half + 1; k <= half; k++) {
        const x = k - frac;
        const t = x * this.#cutoff;
        const sinc = t === 0 ? 1 : Math.sin(Math.PI * t) / (Math.PI * t);
        const w = x / half;
        const window = 0.42 + 0.5 * Math.cos(Math.PI * w) + 0.08 * Math.cos(2 * Math.PI * w);
        this.#table[p * 2 * half + (k + half - 1)] = sinc * window * this.#cutoff;
      }
    }
    // history of `half` zeros before the first sample
    this.#buffer = new Float32Array(this.#half);
  }

  /** The output samples that `input` completes. */
  push(input: Float32Array): Float32Array {
    if (this.from === this.to) return input.slice();
    const joined = new Float32Array(this.#buffer.length + input.length);
    joined.set(this.#buffer);
    joined.set(input, this.#buffer.length);
    return this.#run(joined, false);
  }

  /** The rest, padding the end with silence. */
  end(): Float32Array {
    if (this.from === this.to) return new Float32Array(0);
    const joined = new Float32Array(this.#buffer.length + this.#half + 1);
    joined.set(this.#buffer);
    return this.#run(joined, true);
  }

  #run(joined: Float32Array, _last: boolean): Float32Array {
    const half = this.#half;
    const taps = 2 * half;
    const table = this.#table;
    const limit = joined.length - half - 1;
    const at = (n: number): number => half + n * this.#ratio - this.#origin;
    const out = new Float32Array(Math.max(0, Math.ceil((limit - at(this.#emitted)) / this.#ratio) + 1));
    let n = this.#emitted;
    let made = 0;
    for (let pos = at(n); pos < limit && made < out.length; pos = at(n)) {
      const centre = Math.floor(pos);
      const row = Math.min(PHASES - 1, Math.round((pos - centre) * PHASES)) * taps;
      const start = centre - half + 1;
      let sum = 0;
      for (let k = 0; k < taps; k++) sum += (joined[start + k] as number) * (table[row + k] as number);
      out[made++] = sum;
      n++;
    }
    this.#emitted = n;
    // keep `half` samples of history before the next output position
    const keepFrom = Math.max(0, Math.floor(at(n)) - half);
    this.#buffer = joined.slice(keepFrom);
    this.#origin += keepFrom;
    return out.subarray(0, made);
  }
}

/** Resamples a whole signal. */
export function resample(input: Float32Array, from: number, to: number): Float32Array {
  if (from === to) return input;
  const r = new Resampler(from, to);
  const a = r.push(input);
  const b = r.end();
  const expected = Math.round((input.length * to) / from);
  const out = new Float32Array(expected);
  out.set(a.subarray(0, expected));
  if (a.length < expected) out.set(b.subarray(0, expected - a.length), a.length);
  return out;
}

/** Float samples (-1..1) to 16-bit little-endian PCM bytes. */
export function toPcm16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i] as number));
    out.writeInt16LE(Math.round(s < 0 ? s * 32768 : s * 32767), i * 2);
  }
  return out;
}

/** 16-bit little-endian PCM bytes (an even length) to float samples. */
export function fromPcm16(bytes: Uint8Array): Float32Array {
  const count = Math.floor(bytes.length / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true) / 32768;
  return out;
}
