import { describe, expect, it } from 'vitest';
import { EU_LANGUAGES } from './languages.ts';
import { FUNCTION_WORD_LANGUAGES, functionWordOf, withoutFunctionWords } from './function-words.ts';

describe('function words, one list per EU language (stopwords-iso)', () => {
  it('holds a list for every official language but Maltese', () => {
    expect(EU_LANGUAGES).toHaveLength(24);
    expect(EU_LANGUAGES.map((l) => l.code).filter((c) => !FUNCTION_WORD_LANGUAGES.includes(c))).toEqual([
      'mt',
    ]);
  });

  it('knows a word by its folded form, in every script', () => {
    expect(functionWordOf('the')).toContain('en');
    expect(functionWordOf('und')).toContain('de');
    expect(functionWordOf('και')).toContain('el'); // Greek "and"
    expect(functionWordOf('и')).toContain('bg'); // Bulgarian "and"
    expect(functionWordOf('klempner')).toEqual([]);
  });

  it('leaves the content words, the kept ones, or the text when nothing else is left', () => {
    expect(withoutFunctionWords("I'm looking for a good plumber")).toBe('plumber');
    expect(withoutFunctionWords('Bar Italia', (w) => w === 'bar')).toBe('Bar Italia');
    expect(withoutFunctionWords('the and of')).toBe('the and of');
    expect(withoutFunctionWords('Zahnarzt München')).toBe('Zahnarzt München');
  });
});
