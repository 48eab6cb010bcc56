import { describe, expect, it } from 'vitest';
import { newId, pooledRandomBytes } from './ids.ts';

describe('ids', () => {
  it('pooledRandomBytes never hands out the same bytes twice, across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const bytes = pooledRandomBytes(10);
      expect(bytes.length).toBe(10);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(2000);
    expect(pooledRandomBytes(10_000).length).toBe(10_000);
  });

  it('newId ascends within one millisecond', () => {
    const ids = Array.from({ length: 100 }, () => newId('usg', 1_795_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(100);
  });
});
