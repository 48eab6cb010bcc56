// What the reference engine reads from a prompt: its key terms, its proper names, its numbers and
// the subject of its question, so that answers are built from the prompt's own words.

const STOPWORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have having ' +
    'he her here hers herself him himself his how i if in into is it its itself just me more most my myself no ' +
    'nor not now of off on once only or other our ours ourselves out over own same she should so some such than ' +
    'that the their theirs them themselves then there these they this those through to too under until up very ' +
    'was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    'please tell explain describe give show let lets let’s want need know like get got make say said ' +
    'hi hello hey thanks thank ok okay yes sure may might must shall us one two something anything ' +
    'right kind sort much many well really actually just via per etc'
  ).split(/\s+/),
);

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word.toLowerCase());
}

/** A word reduced for comparison: lower case, a plural `s` dropped. */
export function stem(word: string): string {
  const lower = word.toLowerCase();
  return lower.length > 3 && lower.endsWith('s') && !lower.endsWith('ss') ? lower.slice(0, -1) : lower;
}

/** The words of `text` in order. */
export function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

function startsSentence(text: string, offset: number): boolean {
  const before = text.slice(0, offset).trimEnd();
  return before === '' || /[.!?:\n]$/.test(before);
}

/**
 * The content words of `text` in order of first appearance, without duplicates: no stopwords,
 * at least three letters (or a number). Capitals are kept for names, dropped from sentence starts.
 */
export function keyTerms(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) {
    const word = match[0];
    if (isStopword(word)) continue;
    if (word.length < 3 && !/^\p{N}+$/u.test(word)) continue;
    const key = stem(word);
    if (seen.has(key)) continue;
    seen.add(key);
    const initialCap = /^\p{Lu}\p{Ll}/u.test(word) && startsSentence(text, match.index);
    out.push(initialCap ? word.toLowerCase() : word);
  }
  return out;
}

/**
 * Runs of capitalised words that are not stopwords: `Padaria Ribeiro`, `Rua Augusta`, `Lisboa`.
 * A single capitalised word that starts a sentence ("Extract the …") is not taken for a name.
 */
export function entities(text: string): string[] {
  const out: string[] = [];
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    let first = true;
    for (const segment of sentence.split(/[,;:()"“”]+|(?<![.!?])[.!?]+(?:\s|$)/)) {
      let run: string[] = [];
      let atStart = first;
      const flush = (): void => {
        if (run.length > 1 || (run.length === 1 && !atStart)) out.push(run.join(' '));
        run = [];
        atStart = false;
      };
      for (const word of segment.split(/\s+/)) {
        if (word === '') continue;
        if (/^\p{Lu}[\p{L}'’-]*$/u.test(word) && !isStopword(word)) run.push(word);
        else flush();
      }
      flush();
      first = false;
    }
  }
  return [...new Set(out)];
}

/** The numbers written in `text`, in order. */
export function numbers(text: string): number[] {
  return (text.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number).filter(Number.isFinite);
}

const QUESTION_LEAD =
  /^(?:(?:what|which|who|whom|whose|how|why|when|where|can|could|would|will|should|do|does|did|is|are|please|tell|explain|describe|me|us|you|about|much|many|long|often|i|we|is|are|was|were|there)\s+)+/i;

/**
 * The subject of a question, for restating it: "What is the capital of Portugal?" gives
 * "the capital of Portugal"; undefined when there is no usable subject.
 */
export function questionSubject(text: string): string | undefined {
  const sentence =
    text
      .trim()
      .split(/(?<=[?])\s+|\n+/)[0]
      ?.trim() ?? '';
  if (!sentence.endsWith('?')) return undefined;
  const subject = sentence
    .replace(/(?<!\?)\?+$/, '')
    .replace(QUESTION_LEAD, '')
    .trim();
  const count = words(subject).length;
  if (count === 0 || count > 14) return undefined;
  return subject;
}

/** "a", "a and b", "a, b and c". */
export function listPhrase(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] ?? ''}`;
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
