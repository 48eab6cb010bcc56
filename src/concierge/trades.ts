// The trade of a brief, by the directory's multilingual thesaurus of NACE activities
// (embeddings/data/thesaurus.ts) and the words of the classes that have their own
// (directory/data/class-terms.ts): which trade the brief asks for, and which trades its words
// could mean at all, so that a model's reading names a trade the brief supports.
import type { ConciergeUnderstanding } from '../../generated/directory/client/types.gen.ts';
import { CLASS_TERMS } from '../directory/data/class-terms.ts';
import { naceClass } from '../directory/data/nace.ts';
import { conceptsOf, foldText } from '../embeddings/index.ts';
import { CONCEPTS, LANGS } from '../embeddings/data/thesaurus.ts';

type Trade = ConciergeUnderstanding['trade'];

/** The folded words of a text, as the brief's reading splits them ("Villeneuve-d'Ascq" one word). */
const foldedWords = (text: string): string[] =>
  [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)].map((m) => foldText(m[0]));

/** "plumber" -> "plumbers", "heating engineer" -> "heating engineers", "bakery" -> "bakeries". */
export function pluralize(term: string): string {
  const words = term.split(' ');
  const last = words.pop() ?? '';
  const plural = /[^aeiou]y$/.test(last)
    ? `${last.slice(0, -1)}ies`
    : /(s|sh|ch|x|z)$/.test(last)
      ? `${last}es`
      : `${last}s`;
  return [...words, plural].join(' ');
}

/** The trade of a brief: the NACE activity its thesaurus words point to most, with the English word to search for. */
export function tradeOf(text: string, activityHint?: string): Trade {
  const weights = conceptsOf(text);
  if (activityHint !== undefined) {
    // the hint decides the activity; the brief's words may still name the trade within it
    const within = [...weights.entries()]
      .filter(([i]) => CONCEPTS[i]?.nace.some((code) => code.startsWith(activityHint)))
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    const concept = within
      ? CONCEPTS[within[0]]
      : CONCEPTS.find((c) => c.nace.some((n) => n.startsWith(activityHint)));
    const name = naceClass(activityHint)?.name ?? concept?.id ?? activityHint;
    // a class with words of its own is searched by its own name (a bookshop, not a boutique)
    const own = CLASS_TERMS[activityHint]?.en;
    const term = own ? firstTerm(own) : concept ? firstTerm(concept.terms.en) : name.toLowerCase();
    return { activity: activityHint, name, term: pluralize(term) };
  }
  // a trade the brief names ("electricians") wins over the things of the job ("a flat", "garage")
  const named = namedConcepts(text);
  for (const index of named) weights.set(index, Math.max(weights.get(index) ?? 0, 1));
  const byCode = new Map<string, { weight: number; concept: number; best: number }>();
  for (const [index, weight] of weights) {
    if (named.size > 0 && !named.has(index)) continue;
    const code = CONCEPTS[index]?.nace[0];
    if (code === undefined) continue;
    const entry = byCode.get(code) ?? { weight: 0, concept: index, best: 0 };
    entry.weight += weight;
    if (weight > entry.best || (weight === entry.best && index < entry.concept)) {
      entry.best = weight;
      entry.concept = index;
    }
    byCode.set(code, entry);
  }
  const [code, top] = [...byCode.entries()].sort(
    (a, b) => b[1].weight - a[1].weight || a[1].concept - b[1].concept,
  )[0] ?? [undefined, undefined];
  if (code === undefined || top === undefined || top.weight < 0.9) return null;
  const concept = CONCEPTS[top.concept];
  return {
    activity: code,
    name: naceClass(code)?.name ?? code,
    term: pluralize(firstTerm(concept?.terms.en ?? code)),
  };
}

const firstTerm = (terms: string) => terms.split('|')[0] ?? terms;

let tradeNames: { stem: string; max: number; concept: number }[] | undefined;

/** The usual names of the trades (each language's first term), stemmed for plurals and cases. */
function names(): { stem: string; max: number; concept: number }[] {
  tradeNames ??= CONCEPTS.flatMap((concept, i) =>
    LANGS.map((lang) => foldText(firstTerm(concept.terms[lang]))).map((name) => ({
      stem: name.length > 5 ? name.slice(0, name.length - 2) : name,
      max: name.length + 4,
      concept: i,
    })),
  );
  return tradeNames;
}

/** Whether a folded word is the name of a trade: "electricians", "idraulici", "hydraulików". */
export function namesOf(word: string): number[] {
  return names()
    .filter((n) => !n.stem.includes(' ') && word.startsWith(n.stem) && word.length <= n.max)
    .map((n) => n.concept);
}

/** The concepts whose trade a text names, by the trade's usual name in any language. */
function namedConcepts(text: string): Set<number> {
  const words = foldedWords(text);
  const folded = ` ${words.join(' ')} `;
  const found = new Set<number>();
  for (const w of words) for (const c of namesOf(w)) found.add(c);
  for (const n of names()) if (n.stem.includes(' ') && folded.includes(` ${n.stem}`)) found.add(n.concept);
  return found;
}

/**
 * The classes a concept's words stand for: its first, and the others that have no words of their
 * own (a bookshop, 47.61, is named by its own words, not by the fashion concept's).
 */
const classesOf = (conceptIndex: number): string[] =>
  (CONCEPTS[conceptIndex]?.nace ?? []).filter((code, i) => i === 0 || CLASS_TERMS[code] === undefined);

const termWords = (terms: string): string[] => terms.split('|').flatMap((t) => foldedWords(t));

let wordsByClass: Map<string, { names: string[]; words: Set<string> }> | undefined;

/** Each class's trade names (each language's first term) and every word of its terms, folded. */
function classWords(): Map<string, { names: string[]; words: Set<string> }> {
  if (wordsByClass) return wordsByClass;
  const map = new Map<string, { names: string[]; words: Set<string> }>();
  const add = (code: string, terms: Record<string, string>) => {
    const entry = map.get(code) ?? { names: [], words: new Set<string>() };
    for (const lang of LANGS) {
      const text = terms[lang] ?? '';
      entry.names.push(foldedWords(firstTerm(text)).join(' '));
      for (const w of termWords(text)) entry.words.add(w);
    }
    map.set(code, entry);
  };
  CONCEPTS.forEach((concept, i) => {
    for (const code of classesOf(i)) add(code, concept.terms);
  });
  for (const [code, terms] of Object.entries(CLASS_TERMS)) add(code, terms);
  wordsByClass = map;
  return map;
}

/** Whether two folded words are forms of one ("rewired", "rewiring"): a stem of 5 letters or more, each at most 3 letters past it. */
function sameStem(a: string, b: string): boolean {
  if (a === b) return true;
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  return p >= 5 && p >= Math.max(a.length, b.length) - 3;
}

/** The classes of the trades a text names by their usual names ("plombiers", "Schlüsseldienst", "librería"). */
export function namedClasses(text: string): Set<string> {
  const found = new Set<string>();
  for (const index of namedConcepts(text)) for (const code of classesOf(index)) found.add(code);
  const words = foldedWords(text);
  const folded = ` ${words.join(' ')} `;
  // as namesOf: a stem for plurals and cases ("librerías"), a phrase whole
  const names = (name: string) =>
    name.includes(' ')
      ? folded.includes(` ${name}`)
      : words.some(
          (w) => w.startsWith(name.length > 5 ? name.slice(0, -2) : name) && w.length <= name.length + 4,
        );
  for (const code of Object.keys(CLASS_TERMS))
    if ((classWords().get(code)?.names ?? []).some(names)) found.add(code);
  return found;
}

/**
 * Whether a text's words support a NACE class as its trade: the text names that trade, or,
 * naming none, has a word of it (a symptom, a thing: "leaking", "boiler", "rewired"). A brief
 * for plumbers, or about a leaking pipe, never supports a locksmith.
 */
export function tradeSupport(text: string, code: string): { supported: boolean; reason: string } {
  const named = namedClasses(text);
  if (named.size > 0) {
    return named.has(code)
      ? { supported: true, reason: 'the brief names that trade' }
      : { supported: false, reason: `the brief names another trade (${[...named].sort().join(', ')})` };
  }
  for (const [index, weight] of conceptsOf(text))
    if (weight >= 0.5 && classesOf(index).includes(code))
      return { supported: true, reason: 'a word of that trade' };
  const words = classWords().get(code)?.words ?? new Set<string>();
  const said = foldedWords(text).filter((w) => w.length >= 5);
  for (const w of said)
    for (const t of words) if (sameStem(w, t)) return { supported: true, reason: 'a word of that trade' };
  return { supported: false, reason: 'no word of the brief is of that trade' };
}
