// The judged set of briefs (src/concierge/testing/judged-briefs.ts): each read as the person
// meant it, member by member, and its job described without their instructions or details.
import { describe, expect, it } from 'vitest';
import { BRIEFS, judge } from './testing/judged-briefs.ts';

describe('the judged briefs', () => {
  it('holds twenty briefs in every language of the directory', () => {
    expect(BRIEFS.length).toBeGreaterThanOrEqual(20);
    expect(new Set(BRIEFS.map((b) => b.language))).toEqual(
      new Set(['en', 'de', 'fr', 'es', 'it', 'nl', 'pl']),
    );
  });

  it.each(BRIEFS.map((b) => [b.brief.slice(0, 70), b] as const))('reads "%s"', (_name, brief) => {
    expect(judge(brief).wrong).toEqual([]);
  });
});
