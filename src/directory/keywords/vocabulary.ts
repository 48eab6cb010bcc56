// What the keyword index knows of words, for understanding a query: whether words are a
// listing's name (a phrase of weight A, the name's own positions), and the nearest words of the
// index to a typo. Reads the postings (postings.ts); builds nothing but a list of lexemes by
// length, refreshed as the index grows.
import { editDistance } from './distance.ts';
import { gallop, type KeywordPostings, type Postings } from './postings.ts';

/** Weight A, where `tsv` holds the listing's name (store.ts). */
const NAME = 3;
/** Listings checked at most for one phrase: enough to find a name that exists. */
const MAX_CHECKED = 20_000;

/**
 * Whether some listing's name holds these folded words next to each other, in this order, for
 * a listing (by position) that `where` accepts.
 */
export function isNamePhrase(
  index: KeywordPostings,
  words: string[],
  where: (at: number) => boolean = () => true,
): boolean {
  if (words.length < 2) return false;
  const found = words.map((w) => index.postings.get(w));
  if (found.some((l) => !l)) return false;
  const lists = found as Postings[];
  const shortest = lists.reduce((a, b) => (b.length < a.length ? b : a));
  const cursors = new Int32Array(lists.length);
  let checked = 0;
  outer: for (let pair = 0; pair < shortest.length / 2; pair++) {
    if (++checked > MAX_CHECKED) return false;
    const at = shortest.data[pair * 2]!;
    if (!where(at)) continue;
    const pairs: number[] = new Array<number>(lists.length);
    for (let k = 0; k < lists.length; k++) {
      const list = lists[k]!;
      const c = gallop(list, cursors[k]!, at);
      cursors[k] = c;
      if (c >= list.length / 2 || list.data[c * 2] !== at) continue outer;
      pairs[k] = c;
    }
    const runs = lists.map((list, k) =>
      index
        .run(list, pairs[k]!)
        .filter((p) => p >>> 14 === NAME)
        .map((p) => p & 0x3fff),
    );
    for (const p of runs[0]!) if (runs.every((run, k) => run.includes(p + k))) return true;
  }
  return false;
}

/**
 * The letters a word holds, as bits (a-z, digits and the rest folded onto the top bits): a
 * letter of one word absent from the other costs at least one edit, so two words whose masks
 * differ by more letters than the typos allowed need no distance computed.
 */
function letterMask(word: string): number {
  let mask = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    const bit = c >= 97 && c <= 122 ? c - 97 : c >= 48 && c <= 57 ? 26 + (c % 5) : 31;
    mask |= 1 << bit;
  }
  return mask;
}

function bits(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v !== 0; v &= v - 1) n++;
  return n;
}

/** The index's lexemes by length with their letter masks, kept while the index holds as many. */
const byLength = new WeakMap<KeywordPostings, { size: number; words: string[][]; masks: Int32Array[] }>();

function lexemesByLength(index: KeywordPostings): { words: string[][]; masks: Int32Array[] } {
  const kept = byLength.get(index);
  if (kept && kept.size === index.postings.size) return kept;
  const words: string[][] = [];
  for (const word of index.postings.keys()) (words[word.length] ??= []).push(word);
  const masks = words.map((list) => Int32Array.from(list ?? [], letterMask));
  const built = { size: index.postings.size, words, masks };
  byLength.set(index, built);
  return built;
}

/**
 * The word of the index nearest to `word` within `max` typos (OSA distance), the one in more
 * listings among equals; undefined when none is.
 */
export function nearestWord(index: KeywordPostings, word: string, max: number): string | undefined {
  const { words, masks } = lexemesByLength(index);
  const own = letterMask(word);
  let best: string | undefined;
  let bestD = max + 1;
  let bestCount = 0;
  for (let len = Math.max(1, word.length - max); len <= word.length + max; len++) {
    const list = words[len] ?? [];
    const listMasks = masks[len]!;
    for (let k = 0; k < list.length; k++) {
      const m = listMasks[k]!;
      if (bits(own & ~m) > max || bits(m & ~own) > max) continue;
      const candidate = list[k]!;
      const d = editDistance(word, candidate, Math.min(max, bestD));
      if (d > max || d > bestD) continue;
      const count = index.postings.get(candidate)!.length;
      // among equals: more listings, then the length nearer the word's, then the longer (a
      // letter left out is the commoner typo: `plumbr` is `plumber` rather than `plumb`)
      const better =
        d < bestD ||
        count > bestCount * 1.5 ||
        (count * 1.5 >= bestCount &&
          (Math.abs(candidate.length - word.length) < Math.abs(best!.length - word.length) ||
            (Math.abs(candidate.length - word.length) === Math.abs(best!.length - word.length) &&
              candidate.length > best!.length)));
      if (better) {
        best = candidate;
        bestD = d;
        bestCount = count;
      }
    }
  }
  return best;
}
