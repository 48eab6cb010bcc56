import { describe, expect, it } from 'vitest';
import { foldText } from './fold.ts';
import { cosine, embed, spread, truncateVector } from './index.ts';

const trades = {
  plumber:
    'Sanitär Huber. Plumbing, heat and air-conditioning installation. Heizung und Sanitär, Badsanierung.',
  electrician: 'Elektro Meier. Electrical installation. Elektroinstallation und Beleuchtung.',
  dentist: 'Zahnarztpraxis Dr. Weber. Dental practice activities.',
  bakery: 'Bäckerei Schmidt. Manufacture of bread; manufacture of fresh pastry goods and cakes.',
  lawyer: 'Kanzlei Roth. Legal activities.',
};

const needs: [string, keyof typeof trades][] = [
  ['my kitchen pipe is leaking', 'plumber'],
  ['the lights keep flickering', 'electrician'],
  ['toothache', 'dentist'],
  ['Wasserrohrbruch in der Küche', 'plumber'],
  ['das Licht flackert ständig', 'electrician'],
  ['Zahnschmerzen', 'dentist'],
  ["fuite d'eau sous l'évier", 'plumber'],
  ['les lumières clignotent', 'electrician'],
  ['mal de dents', 'dentist'],
  ['el grifo gotea', 'plumber'],
  ['las luces parpadean', 'electrician'],
  ['dolor de muelas', 'dentist'],
  ['il rubinetto perde acqua', 'plumber'],
  ['le luci sfarfallano', 'electrician'],
  ['mal di denti', 'dentist'],
  ['de kraan lekt', 'plumber'],
  ['de lampen flikkeren', 'electrician'],
  ['kiespijn', 'dentist'],
  ['cieknie rura w kuchni', 'plumber'],
  ['światło migocze', 'electrician'],
  ['ból zęba', 'dentist'],
  ['o cano da cozinha está a pingar', 'plumber'],
  ['a torneira está a pingar', 'plumber'],
  ['as luzes estão a piscar', 'electrician'],
  ['dor de dentes', 'dentist'],
  ['preciso de um encanador', 'plumber'],
];

describe('embed', () => {
  const names = Object.keys(trades) as (keyof typeof trades)[];
  const docs = embed(Object.values(trades));

  it.each(needs)('%s -> %s', (need, expected) => {
    const [q] = embed([need]);
    const ranked = names.map((n, i) => [n, cosine(q!, docs[i]!)] as const).sort((a, b) => b[1] - a[1]);
    expect(ranked[0]?.[0]).toBe(expected);
    expect(ranked[0]![1] - ranked[1]![1]).toBeGreaterThan(0.1);
  });

  it('is deterministic, L2-normalised and honours dimensions', () => {
    const [a] = embed(['Rohrbruch'], 256);
    const [b] = embed(['Rohrbruch'], 256);
    expect(a).toHaveLength(256);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(cosine(a!, a!)).toBeCloseTo(1, 5);
    expect(() => embed(['x'], 3)).toThrow(RangeError);
  });

  it('folds accents and case: MÜNCHEN and munchen are the same text', () => {
    const [a, b] = embed(['MÜNCHEN Straße', 'munchen strasse']);
    expect(cosine(a!, b!)).toBeCloseTo(1, 5);
  });

  it('unknown words still match themselves through character trigrams', () => {
    const [a, b, c] = embed(['Quetzalcoatl Holding', 'quetzalcoatl', 'Zahnarzt']);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!) + 0.3);
  });
});

describe('foldText', () => {
  it('folds ASCII and the rest alike: case, accents, and the letters NFD does not split', () => {
    expect(foldText('MUNCHEN Rue de la Paix, 12')).toBe('munchen rue de la paix, 12');
    expect(foldText('MÜNCHEN Straße')).toBe('munchen strasse');
    expect(foldText('Łódź Ærøskøbing Œuvre')).toBe('lodz aeroskobing oeuvre');
    expect(foldText('')).toBe('');
  });
});

describe('fewer dimensions', () => {
  // two buckets of a hashed vector, unequal (equal ones cancel in half the Hadamard outputs)
  const sparse = (d: number, at: [number, number]): Float32Array => {
    const v = new Float32Array(d);
    v[at[0]] = 0.8;
    v[at[1]] = 0.6;
    return v;
  };

  it('the rotation keeps length and every cosine, and spreads a sparse vector over all dimensions', () => {
    for (const d of [384, 256, 100]) {
      const a = sparse(d, [d - 1, d - 7]);
      const b = sparse(d, [d - 1, 3]);
      const [ra, rb] = [spread(a), spread(b)];
      expect(cosine(ra, ra)).toBeCloseTo(1, 6);
      expect(cosine(ra, rb)).toBeCloseTo(cosine(a, b), 6);
      const zeros = Array.from(ra).filter((x) => Math.abs(x) < 1e-9).length;
      expect(zeros).toBeLessThan(d / 4);
    }
  });

  it('a prefix of 4 of a text with no thesaurus word still carries it (not all zeros)', () => {
    const [v] = embed(['Padaria sem glúten no Porto']);
    const head = truncateVector(v!, 4);
    expect(Array.from(head).some((x) => Math.abs(x) > 0.05)).toBe(true);
    expect(cosine(head, head)).toBeCloseTo(1, 5);
  });

  it('short prefixes keep the meaning roughly: a need stays nearer its trade at 64 dimensions', () => {
    const [need, plumber, dentist] = embed([
      'my kitchen pipe is leaking',
      trades.plumber,
      trades.dentist,
    ]).map((v) => truncateVector(v, 64));
    expect(cosine(need!, plumber!)).toBeGreaterThan(cosine(need!, dentist!));
  });
});
