import { describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH } from './json-depth.ts';

const bytes = (text: string) => Buffer.from(text);

describe('jsonDepth', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(jsonDepth(bytes('{"a":[1,{"b":"[[[{{{"}]}'))).toBe(3);
    expect(jsonDepth(bytes('"just a string"'))).toBe(0);
    expect(jsonDepth(bytes('{"q":"a \\" [ still a string"}'))).toBe(1);
  });

  it('stops at the first depth over the limit', () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    expect(jsonDepth(bytes(deep))).toBe(MAX_JSON_DEPTH + 1);
    expect(jsonDepth(bytes('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH)))).toBe(MAX_JSON_DEPTH);
  });
});
