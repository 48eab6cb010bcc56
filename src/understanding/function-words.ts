// Function words of the EU's languages: the words a sentence is built with ("I'm looking for a",
// "wo finde ich einen", "je cherche un"), which name nothing a listing is. Data, one list per
// language, from stopwords-iso 1.1.0 (MIT; docs/data.md), folded as the directory folds text.
// stopwords-iso has no Maltese list: Maltese has none here yet (docs/data.md says so).
import { createRequire } from 'node:module';
import { foldText } from '../embeddings/fold.ts';
import { EU_LANGUAGES, type LanguageCode } from './languages.ts';

const lists = createRequire(import.meta.url)('stopwords-iso') as Partial<Record<string, string[]>>;

/** Each folded function word, with the languages it is one of. */
const WORDS = new Map<string, LanguageCode[]>();
for (const { code } of EU_LANGUAGES) {
  for (const word of lists[code] ?? []) {
    const folded = foldText(word.trim());
    if (folded === '') continue;
    const langs = WORDS.get(folded);
    if (langs === undefined) WORDS.set(folded, [code]);
    else if (!langs.includes(code)) langs.push(code);
  }
}

/** The languages of which `word` (folded) is a function word; empty for every other word. */
export function functionWordOf(word: string): readonly LanguageCode[] {
  return WORDS.get(word) ?? [];
}

/** The languages whose function words this module holds (every official one but Maltese, today). */
export const FUNCTION_WORD_LANGUAGES: readonly LanguageCode[] = EU_LANGUAGES.map((l) => l.code).filter(
  (code) => (lists[code]?.length ?? 0) > 0,
);

/** A word of text as a reader sees it: letters and digits, an apostrophe inside ("I'm", "l'idraulico"). */
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

/**
 * `text` without its function words, when something else is left ("I'm looking for a good
 * plumber" -> "plumber"); `keep` says which words stay whatever they are (a trade's word that is
 * also a function word somewhere). The text unchanged when it holds nothing but function words.
 */
export function withoutFunctionWords(text: string, keep: (folded: string) => boolean = () => false): string {
  const content: string[] = [];
  let dropped = false;
  for (const m of text.matchAll(WORD)) {
    const folded = foldText(m[0].replace(/’/g, "'"));
    if (functionWordOf(folded).length > 0 && !keep(folded)) dropped = true;
    else content.push(m[0]);
  }
  if (!dropped || content.length === 0) return text;
  return content.join(' ');
}
