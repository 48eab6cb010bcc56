// What the keyword index knows of words, for understanding a query: whether words are a
// listing's name (a phrase of weight A, the name's own positions), and the nearest words of the
// index to a typo. Reads the postings (postings.ts); builds nothing but a list of lexemes by
// length, refreshed as the index grows.
import { editDistance } from './distance.ts';
import { gallop, type KeywordIndex, type Postings } from './postings.ts';

/** Weight A, where `tsv` holds the listing's name (store.ts). */
const NAME = 3;
/** Listings checked at most for one phrase: enough to find a name that exists. */
const MAX_CHECKED = 20_000;

/**
 * Whether some listing's name holds these folded words next to each other, in this order, for
 * a listing (by position) that `where` accepts.
 */
export function isNamePhrase(
  index: KeywordIndex,
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

/** The index's lexemes by length, kept while the index holds as many. */
const byLength = new WeakMap<KeywordIndex, { size: number; words: string[][] }>();

function lexemesByLength(index: KeywordIndex): string[][] {
  const kept = byLength.get(index);
  if (kept && kept.size === index.postings.size) return kept.words;
  const words: string[][] = [];
  for (const word of index.postings.keys()) (words[word.length] ??= []).push(word);
  byLength.set(index, { size: index.postings.size, words });
  return words;
}

/**
 * The word of the index nearest to `word` within `max` typos (OSA distance), the one in more
 * listings among equals; undefined when none is.
 */
export function nearestWord(index: KeywordIndex, word: string, max: number): string | undefined {
  const words = lexemesByLength(index);
  let best: string | undefined;
  let bestD = max + 1;
  let bestCount = 0;
  for (let len = Math.max(1, word.length - max); len <= word.length + max; len++) {
    for (const candidate of words[len] ?? []) {
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
