// The one seeded PRNG of the demo data, its photos and the embedding engine: a 32-bit FNV-1a
// hash of a string seeds mulberry32. Same seed, same sequence, on every machine.

/** 32-bit FNV-1a of a string. */
export function fnv1a32(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h >>> 0;
}

/** mulberry32: floats in [0, 1) from a 32-bit state. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
