import { describe, expect, it } from 'vitest';
import { asSentence, UtteranceParser } from './recognize.ts';

const OUTPUT = `please call me tomorrow
<s> 0.000 0.070 0.999800
please 0.080 0.260 0.854945
<sil> 0.270 0.320 0.684379
call 0.330 0.780 0.041883
me 0.790 0.900 0.999800
tomorrow(2) 0.910 1.220 0.999800
</s> 1.850 2.120 1.000000
i would
<s> 3.380 3.480 0.999500
i 3.490 3.650 0.995908
would 3.660 3.840 0.432057
</s> 5.000 5.280 1.000000
`;

describe('PocketSphinx output', () => {
  it('parses utterances and their words with times, dropping fillers and alternates, in any pieces', () => {
    for (const step of [OUTPUT.length, 7, 1]) {
      const parser = new UtteranceParser();
      const utterances = [];
      for (let i = 0; i < OUTPUT.length; i += step)
        utterances.push(...parser.push(OUTPUT.slice(i, i + step)));
      utterances.push(...parser.end());
      expect(utterances.map((u) => [u.text, u.start, u.end])).toEqual([
        ['please call me tomorrow', 0.08, 1.22],
        ['i would', 3.49, 3.84],
      ]);
      expect(utterances[0]!.words.map((w) => w.word)).toEqual(['please', 'call', 'me', 'tomorrow']);
      expect(utterances[0]!.words[1]!.confidence).toBeCloseTo(0.041883, 6);
    }
  });

  it('writes the words as a sentence', () => {
    expect(asSentence('i would like to book a table')).toBe('I would like to book a table.');
    expect(asSentence('')).toBe('');
  });
});
