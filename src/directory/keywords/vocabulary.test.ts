// The keyword index's words for understanding a query: typo corrections and listings' names.
import { describe, expect, it } from 'vitest';
import { addPostings, KeywordIndex } from './postings.ts';
import { isNamePhrase, nearestWord } from './vocabulary.ts';

function index(tsvs: string[]): KeywordIndex {
  const out = new KeywordIndex();
  tsvs.forEach((tsv, at) => addPostings(out, at, tsv));
  return out;
}

describe('vocabulary', () => {
  const kw = index([
    "'paris':1A 'bar':2A 'restaurant':5C 'berlin':7",
    "'plumber':1A,4C 'plumb':5C 'berlin':8",
    "'plumber':1C 'plumb':2C 'paris':3 'bar':9",
    "'restaurant':1A 'backerei':3B",
  ]);

  it('corrects a typo to the nearest word, the one in more listings among equals', () => {
    expect(nearestWord(kw, 'plumbr', 1)).toBe('plumber');
    expect(nearestWord(kw, 'plumbar', 1)).toBe('plumber'); // a letter replaced
    expect(nearestWord(kw, 'restuarant', 2)).toBe('restaurant'); // two letters swapped: one typo
    expect(nearestWord(kw, 'bakcerei', 1)).toBe('backerei');
    expect(nearestWord(kw, 'plmbr', 1)).toBeUndefined(); // two typos, one allowed
    expect(['plumb', 'plumber']).toContain(nearestWord(kw, 'plmbr', 2)); // both two edits away
    expect(nearestWord(kw, 'xyzzy', 2)).toBeUndefined();
  });

  it('finds words next to each other in a name only', () => {
    expect(isNamePhrase(kw, ['paris', 'bar'])).toBe(true);
    expect(isNamePhrase(kw, ['bar', 'paris'])).toBe(false);
    // in the third listing they are words of the text, apart
    expect(isNamePhrase(kw, ['paris', 'bar'], (at) => at !== 0)).toBe(false);
    expect(isNamePhrase(kw, ['paris', 'plumber'])).toBe(false);
  });
});
