// The search index's shared-memory parts: dictionaries, lists and postings, against the plain
// structures they replace, and read through a second set of handles (as another thread does).
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../platform/prng.ts';
import { addPostings, KeywordIndex } from '../keywords/postings.ts';
import { KeywordLoad, SharedKeywords } from './keywords.ts';
import { Lists } from './lists.ts';
import { SharedIndex } from './shared-index.ts';
import { Dictionary } from './strings.ts';

describe('a shared dictionary', () => {
  it('numbers strings in order, finds each through its rehashes, and reads the same from its handles', () => {
    const dict = new Dictionary();
    const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}${i % 7 === 0 ? 'ß€' : ''}`);
    words.forEach((w, i) => expect(dict.idOf(w)).toBe(i));
    words.forEach((w, i) => expect(dict.idOf(w)).toBe(i)); // again: no new number
    const other = new Dictionary(dict.handles());
    for (const d of [dict, other]) {
      expect(d.size).toBe(words.length);
      words.forEach((w, i) => expect(d.get(w)).toBe(i));
      expect(d.get('absent')).toBeUndefined();
      expect(d.has('w0ß€')).toBe(true);
      expect([...d.keys()]).toEqual(words);
      expect(d.at(4999)).toBe(words[4999]);
    }
    // a string added after the other thread attached is seen there
    dict.idOf('later');
    expect(other.get('later')).toBe(5000);
  });
});

describe('shared lists', () => {
  it('keeps every record through freezing and moves, each list in order', () => {
    const random = mulberry32(3);
    const lists = new Lists({ width: 2, codes: true, maxRecords: 1 << 20 });
    const expected: number[][] = Array.from({ length: 50 }, () => []);
    // laid out once, then appended to (some lists move, more than once)
    const counts = expected.map((_, id) => id % 5);
    lists.freeze(counts, (places, data, codes) => {
      counts.forEach((count, id) => {
        for (let k = 0; k < count; k++) {
          const at = places[id]! + k;
          data[at * 2] = id * 1000 + k;
          data[at * 2 + 1] = -k;
          codes![at] = k;
          expected[id]!.push(id * 1000 + k);
        }
      });
    });
    for (let i = 0; i < 2000; i++) {
      const id = Math.floor(random() * 60); // ten lists made by the append
      expected[id] ??= [];
      const value = id * 1000 + expected[id].length;
      lists.append(id, [value, -expected[id].length], expected[id].length);
      expected[id].push(value);
    }
    const other = new Lists({ width: 2, codes: true, maxRecords: 1 << 20 }, lists.handles());
    for (const l of [lists, other]) {
      expected.forEach((values, id) => {
        const view = l.view(id)!;
        expect(view.length).toBe(values.length);
        expect(Array.from({ length: view.length }, (_, k) => view.data[k * 2])).toEqual(values);
        expect(Array.from({ length: view.length }, (_, k) => view.data[k * 2 + 1])).toEqual(
          values.map((_, k) => (k === 0 ? 0 : -k)),
        );
        expect(Array.from(view.codes!)).toEqual(values.map((_, k) => k));
      });
    }
  });
});

describe('shared keyword postings', () => {
  it('hold what the private index holds, loaded at once or added one by one', () => {
    const random = mulberry32(9);
    const vocabulary = Array.from({ length: 300 }, (_, i) => `lex${i}`);
    const tsvs = Array.from({ length: 800 }, () => {
      const lexemes = new Set<string>();
      const n = 1 + Math.floor(random() * 12);
      // a skewed vocabulary: a few lexemes in most listings
      for (let k = 0; k < n; k++) lexemes.add(vocabulary[Math.floor(random() ** 3 * vocabulary.length)]!);
      return [...lexemes]
        .map((l) => {
          const runs = Array.from(
            { length: 1 + Math.floor(random() * (random() < 0.1 ? 20 : 3)) },
            (_, p) =>
              `${1 + p * 3 + Math.floor(random() * 3) + (random() < 0.05 ? 9000 : 0)}${'ABCD'[Math.floor(random() * 4)]}`,
          );
          return `'${l}':${runs.join(',')}`;
        })
        .join(' ');
    });
    const plain = new KeywordIndex();
    tsvs.forEach((tsv, at) => addPostings(plain, at, tsv));
    // the first 500 as the start-up load lays them out, the rest appended
    const shared = new SharedKeywords();
    const load = new KeywordLoad(shared);
    tsvs.slice(0, 500).forEach((tsv, at) => addPostings(load, at, tsv));
    load.finish();
    tsvs.slice(500).forEach((tsv, i) => addPostings(shared, 500 + i, tsv));
    const attached = new SharedKeywords(shared.handles());
    for (const index of [shared, attached]) {
      expect(index.postings.size).toBe(plain.postings.size);
      expect(new Set(index.postings.keys())).toEqual(new Set(plain.postings.keys()));
      for (const [lexeme, list] of plain.postings) {
        const got = index.postings.get(lexeme)!;
        expect(got.length).toBe(list.length);
        for (let pair = 0; pair < list.length / 2; pair++) {
          expect(got.data[pair * 2]).toBe(list.data[pair * 2]);
          expect(got.codes[pair]).toBe(list.codes[pair]);
          expect(index.run(got, pair)).toEqual(plain.run(list, pair));
        }
      }
      expect(index.postings.get('absent')).toBeUndefined();
    }
  });
});

describe('the shared columns', () => {
  it('are read in full after they grow, whoever looked at them first', () => {
    const index = new SharedIndex();
    expect(index.reading().reviews).toHaveLength(0); // a search before any listing
    // the owner grows the columns and writes (load() views them through column() first)
    index.reserve(3);
    for (let at = 0; at < 3; at++) {
      index.column('seqs')[at] = at + 1;
      index.column('reviews')[at] = 10 + at;
    }
    index.publish(3);
    expect(index.column('seqs')[2]).toBe(3); // as positionsUpTo reads
    const cols = index.reading();
    expect(cols.size).toBe(3);
    expect(Array.from(cols.reviews.subarray(0, 3))).toEqual([10, 11, 12]);
    const other = new SharedIndex(index.handles());
    expect(Array.from(other.reading().reviews.subarray(0, 3))).toEqual([10, 11, 12]);
  });

  it('grow each on its own: a column grown while seqs is not is seen grown', () => {
    const index = new SharedIndex();
    index.reserve(1);
    const seqsBytes = index.columnBuffers.seqs.bytes;
    const before = index.column('reviews').length;
    expect(index.reading().reviews).toHaveLength(before);
    // as reserve() does at about 2.4 million listings: reviews steps past its end, seqs does not
    index.columnBuffers.reviews.reserve((before + 1) * 4);
    expect(index.columnBuffers.seqs.bytes).toBe(seqsBytes);
    expect(index.column('reviews').length).toBeGreaterThan(before);
    expect(index.reading().reviews.length).toBeGreaterThan(before);
  });
});
