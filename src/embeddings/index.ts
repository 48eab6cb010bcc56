// The built-in, offline embedding engine: a lexical-semantic model, not a neural one. A text's
// vector is the sum of two parts, L2-normalised:
//  - concepts: words and phrases from a multilingual thesaurus (data/thesaurus.ts: need phrasings
//    and trade words in EN, DE, FR, ES, IT, NL, PL, tied to NACE activities) each add a fixed
//    pseudo-random direction per concept, plus a shared direction for the concept's group, so
//    "my kitchen pipe is leaking", "Rohrbruch" and "plombier" point the same way;
//  - surface: hashed character trigrams of the folded words, so unknown words, names and
//    spelling variants still match themselves.
// Deterministic (no randomness beyond fixed seeds), offline, and fast (tens of microseconds a
// text). An upstream embedding model can replace it behind the same `embed` signature; the
// directory stores vectors computed here, so switching means re-embedding the listings.
import { CONCEPTS, LANGS } from './data/thesaurus.ts';
import { tokenize } from './fold.ts';
import { fnv1a32, mulberry32 } from '../platform/prng.ts';

export { foldText, tokenize } from './fold.ts';

export const DEFAULT_DIMENSIONS = 384;

interface TermHit {
  concept: number;
  weight: number;
}

// single folded words -> concepts; phrases (several words) keyed by their first word
const WORDS = new Map<string, TermHit[]>();
const PHRASES = new Map<string, { words: string[]; hit: TermHit }[]>();

function addHit(map: Map<string, TermHit[]>, key: string, hit: TermHit): void {
  const list = map.get(key) ?? [];
  if (!list.some((h) => h.concept === hit.concept)) list.push(hit);
  map.set(key, list);
}

CONCEPTS.forEach((concept, index) => {
  for (const lang of LANGS) {
    for (const term of concept.terms[lang].split('|')) {
      const words = tokenize(term);
      if (words.length === 0) continue;
      // The trade names (first terms) are the strongest evidence; symptoms and objects less.
      const hit = { concept: index, weight: 1 };
      if (words.length === 1) addHit(WORDS, words[0] ?? '', hit);
      else {
        const first = words[0] ?? '';
        const list = PHRASES.get(first) ?? [];
        list.push({ words, hit: { concept: index, weight: 1.5 } });
        PHRASES.set(first, list);
        // each long word of a phrase is weak evidence alone ("pompa di calore" -> "calore")
        for (const w of words) if (w.length >= 5) addHit(WORDS, w, { concept: index, weight: 0.25 });
      }
    }
  }
});

/** The longest word of the thesaurus: no part of a compound longer than it can be one of its words. */
let longestTerm = 0;
for (const word of WORDS.keys()) longestTerm = Math.max(longestTerm, word.length);
/**
 * The longest word read for its compounds. A language's longest compounds in use are about half
 * this; a longer run of letters (a pasted key, one letter held down) is no word, and looking
 * inside it cost the cube of its length (8,000 letters: minutes, holding the thread).
 */
const LONGEST_WORD = 64;

/** Finds the thesaurus entries of one folded word: exact, inflected (a known stem plus up to 4 letters), or inside a compound. */
function lookupWord(word: string): TermHit[] {
  if (word.length > LONGEST_WORD) return [];
  const exact = WORDS.get(word);
  if (exact) return exact;
  if (word.length >= 5) {
    // inflections: "leaking" -> "leak", "plumbers" -> "plumber", "flackert" -> "flacker"
    for (let cut = 1; cut <= 4 && word.length - cut >= 4; cut++) {
      const stem = WORDS.get(word.slice(0, word.length - cut));
      if (stem) return stem.map((h) => ({ concept: h.concept, weight: h.weight * 0.9 }));
    }
  } else if (word.endsWith('s')) {
    const singular = WORDS.get(word.slice(0, -1));
    if (singular) return singular;
  }
  if (word.length >= 8) {
    // compounds: "wasserrohrbruch" contains "rohrbruch", "zahnschmerzen" contains "zahn"
    const hits: TermHit[] = [];
    for (let start = 0; start < word.length - 3; start++) {
      for (let end = Math.min(word.length, start + longestTerm); end - start >= 4; end--) {
        if (start === 0 && end === word.length) continue;
        const part = WORDS.get(word.slice(start, end));
        if (part) {
          for (const h of part) hits.push({ concept: h.concept, weight: h.weight * 0.7 });
          break;
        }
      }
    }
    return hits;
  }
  return [];
}

/** The concept weights of a text (index into CONCEPTS -> weight). */
export function conceptsOf(text: string): Map<number, number> {
  const words = tokenize(text);
  const weights = new Map<number, number>();
  const add = (hit: TermHit) => weights.set(hit.concept, (weights.get(hit.concept) ?? 0) + hit.weight);
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    for (const phrase of PHRASES.get(word) ?? []) {
      if (phrase.words.every((w, j) => words[i + j] === w)) add(phrase.hit);
    }
    for (const hit of lookupWord(word)) add(hit);
  }
  return weights;
}

/** Whether `text` is, word for word, one of the thesaurus's phrases ("hair salon", "car wash"). */
export function isTermPhrase(text: string): boolean {
  const words = tokenize(text);
  if (words.length < 2) return false;
  return (PHRASES.get(words[0]!) ?? []).some(
    (phrase) => phrase.words.length === words.length && phrase.words.every((w, j) => words[j] === w),
  );
}

// Deterministic pseudo-random unit directions: mulberry32 seeded by a string hash, Box-Muller.

function direction(key: string, dimensions: number): Float32Array {
  const next = mulberry32(fnv1a32(key));
  const v = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    const u = Math.max(next(), 1e-12);
    v[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  }
  return normalize(v);
}

function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / norm;
  return v;
}

const conceptVectors = new Map<number, Float32Array[]>();

function conceptVector(index: number, dimensions: number): Float32Array {
  let byConcept = conceptVectors.get(dimensions);
  if (!byConcept) {
    byConcept = CONCEPTS.map((c) => {
      const own = direction(`concept:${c.id}`, dimensions);
      const group = direction(`group:${c.group}`, dimensions);
      const v = new Float32Array(dimensions);
      for (let i = 0; i < dimensions; i++) v[i] = 0.9 * (own[i] ?? 0) + 0.35 * (group[i] ?? 0);
      return normalize(v);
    });
    conceptVectors.set(dimensions, byConcept);
  }
  return byConcept[index] as Float32Array;
}

function surfaceVector(text: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  for (const word of tokenize(text)) {
    const padded = `#${word}#`;
    for (let i = 0; i + 3 <= padded.length; i++) {
      const h = fnv1a32(padded.slice(i, i + 3));
      v[h % dimensions] = (v[h % dimensions] ?? 0) + ((h >>> 31) & 1 ? 1 : -1);
    }
  }
  return normalize(v);
}

const CONCEPT_SHARE = 0.88;

// The surface part is sparse (one hashed bucket per trigram), so the first few dimensions of a
// raw vector may all be zero, and "fewer dimensions keep the first ones" (the embeddings API,
// like OpenAI's) would lose the text. A fixed orthogonal rotation spreads every vector's energy
// over all dimensions without changing any cosine: random signs, a permutation, a normalised
// Walsh-Hadamard transform on each power-of-two block, then an orthonormal DCT across blocks.
// O(d log d): a few microseconds for 384 dimensions.

interface Rotation {
  signs: Float32Array;
  order: Uint16Array;
  block: number;
  blocks: number;
  /** blocks x blocks, row-major: the orthonormal DCT-II. */
  mix: Float64Array;
}

const rotations = new Map<number, Rotation>();

function rotationFor(dimensions: number): Rotation {
  let rotation = rotations.get(dimensions);
  if (rotation) return rotation;
  const next = mulberry32(fnv1a32(`rotation:${dimensions}`));
  const signs = new Float32Array(dimensions).map(() => (next() < 0.5 ? -1 : 1));
  const order = new Uint16Array(dimensions).map((_, i) => i);
  for (let i = dimensions - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const t = order[i] ?? 0;
    order[i] = order[j] ?? 0;
    order[j] = t;
  }
  let block = 1;
  while (dimensions % (block * 2) === 0) block *= 2;
  const blocks = dimensions / block;
  const mix = new Float64Array(blocks * blocks);
  for (let k = 0; k < blocks; k++) {
    const scale = Math.sqrt((k === 0 ? 1 : 2) / blocks);
    for (let n = 0; n < blocks; n++)
      mix[k * blocks + n] = scale * Math.cos((Math.PI / blocks) * (n + 0.5) * k);
  }
  rotation = { signs, order, block, blocks, mix };
  rotations.set(dimensions, rotation);
  return rotation;
}

/** The vector under the fixed rotation of its dimension: same length, same cosines, energy spread. */
export function spread(v: Float32Array): Float32Array {
  const d = v.length;
  if (d < 2 || d > 65_535) return v;
  const { signs, order, block, blocks, mix } = rotationFor(d);
  const x = new Float64Array(d);
  for (let i = 0; i < d; i++) x[i] = (v[order[i] ?? 0] ?? 0) * (signs[i] ?? 1);
  const norm = 1 / Math.sqrt(block);
  for (let start = 0; start < d; start += block) {
    for (let h = 1; h < block; h *= 2) {
      for (let i = start; i < start + block; i += h * 2) {
        for (let j = i; j < i + h; j++) {
          const a = x[j] ?? 0;
          const b = x[j + h] ?? 0;
          x[j] = a + b;
          x[j + h] = a - b;
        }
      }
    }
    for (let i = start; i < start + block; i++) x[i] = (x[i] ?? 0) * norm;
  }
  const out = new Float32Array(d);
  if (blocks === 1) {
    for (let i = 0; i < d; i++) out[i] = x[i] ?? 0;
    return out;
  }
  for (let j = 0; j < block; j++) {
    for (let k = 0; k < blocks; k++) {
      let sum = 0;
      for (let n = 0; n < blocks; n++) sum += (mix[k * blocks + n] ?? 0) * (x[n * block + j] ?? 0);
      out[k * block + j] = sum;
    }
  }
  return out;
}

export function embedOne(text: string, dimensions = DEFAULT_DIMENSIONS): Float32Array {
  return spread(combine(text, dimensions));
}

function combine(text: string, dimensions: number): Float32Array {
  const concepts = conceptsOf(text);
  const surface = surfaceVector(text, dimensions);
  if (concepts.size === 0) return surface;
  const conceptPart = new Float32Array(dimensions);
  // dampen repetition: sqrt of the summed weight per concept
  for (const [index, weight] of concepts) {
    const cv = conceptVector(index, dimensions);
    const w = Math.sqrt(weight);
    for (let i = 0; i < dimensions; i++) conceptPart[i] = (conceptPart[i] ?? 0) + w * (cv[i] ?? 0);
  }
  normalize(conceptPart);
  const v = new Float32Array(dimensions);
  const surfaceShare = Math.sqrt(1 - CONCEPT_SHARE * CONCEPT_SHARE);
  for (let i = 0; i < dimensions; i++) {
    v[i] = CONCEPT_SHARE * (conceptPart[i] ?? 0) + surfaceShare * (surface[i] ?? 0);
  }
  return normalize(v);
}

/**
 * Embeds texts as L2-normalised vectors (deterministic, offline).
 *
 * @example
 * const [q, doc] = embed(['my kitchen pipe is leaking', 'Klempner und Sanitär']);
 * cosine(q, doc); // high: both are about plumbing
 */
export function embed(texts: string[], dimensions = DEFAULT_DIMENSIONS): Float32Array[] {
  if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 4096) {
    throw new RangeError('dimensions must be an integer from 8 to 4096');
  }
  return texts.map((t) => embedOne(t, dimensions));
}

/** The dot product of two vectors; their cosine similarity when both are normalised. */
/** The first `dimensions` numbers of a unit vector, normalised again to unit length. */
export function truncateVector(vector: Float32Array, dimensions: number): Float32Array {
  if (dimensions >= vector.length) return vector;
  const out = vector.slice(0, dimensions);
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm === 0) {
    // the first dimensions carry nothing: the unit vector along the first axis, not NaNs
    out[0] = 1;
    return out;
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / norm;
  return out;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}
