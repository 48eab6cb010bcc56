import { describe, expect, it } from 'vitest';
import { createVectorStore, DIMENSIONS, quantizeQuery, simdKernel } from './dot.ts';
import { mulberry32 } from '../platform/prng.ts';

describe('the dot-product kernels', () => {
  it('assembles the WebAssembly SIMD kernel on this Node', () => {
    expect(simdKernel).toBe(true);
    expect(createVectorStore().kind).toBe('wasm');
  });

  it('gives the plain loop’s exact integers, at any position, across memory growth', () => {
    const random = mulberry32(7);
    const wasm = createVectorStore('wasm');
    const js = createVectorStore('js');
    const n = 3000;
    const bytes = new Int8Array(DIMENSIONS);
    for (let at = 0; at < n; at++) {
      // grow in steps, as the index does, so the kernel sees detached and regrown memory
      if (at % 1000 === 0) for (const s of [wasm, js]) s.reserve(at + 1000);
      // the extremes included: -128 and 127 against +-32767 is the largest product
      for (let d = 0; d < DIMENSIONS; d++)
        bytes[d] = at === 0 ? -128 : at === 1 ? 127 : Math.floor(random() * 256) - 128;
      // a short stored vector (an older engine): the missing dimensions count as zero
      const stored = at === 2 ? bytes.subarray(0, 100) : bytes;
      wasm.set(at, stored);
      js.set(at, stored);
    }
    const query = new Float32Array(DIMENSIONS).map((_, i) => (i % 2 ? -1 : 1) * (random() - 0.5));
    query[0] = 0.9;
    const { values } = quantizeQuery(query);
    const positions = Array.from({ length: 5000 }, (_, k) => (k < 3 ? k : Math.floor(random() * n)));
    const fromWasm = wasm.dots(values, positions, positions.length);
    expect(fromWasm).toEqual(js.dots(values, positions, positions.length));
    // the extremes are exact, with no overflow
    const sum = values.reduce((a, v) => a + v, 0);
    expect(fromWasm[0]).toBe(-128 * sum);
    expect(fromWasm[1]).toBe(127 * sum);
    expect(wasm.dots(values, [], 0)).toEqual(new Int32Array(0));
  });

  it('quantizes a query to within 2e-5 of its dot products', () => {
    const random = mulberry32(11);
    const query = new Float32Array(DIMENSIONS).map(() => random() - 0.5);
    const { values, scale } = quantizeQuery(query);
    const store = createVectorStore();
    store.reserve(1);
    const bytes = new Int8Array(DIMENSIONS).map(() => Math.floor(random() * 256) - 128);
    store.set(0, bytes);
    let exact = 0;
    let norm = 0;
    for (let d = 0; d < DIMENSIONS; d++) {
      exact += query[d]! * bytes[d]!;
      norm += Math.abs(query[d]! * bytes[d]!);
    }
    expect(Math.abs(store.dots(values, [0], 1)[0]! * scale - exact)).toBeLessThan(2e-5 * norm);
    expect(quantizeQuery(new Float32Array(DIMENSIONS))).toEqual({
      values: new Int16Array(DIMENSIONS),
      scale: 0,
    });
  });
});
