import { describe, expect, it } from 'vitest';
import { billingOf } from './brief.ts';

const quote = (comparable: boolean) => ({ quote: { comparable } });

describe('billing by the work done', () => {
  it('bills a comparison of two quotes or more by the providers contacted, never above the accepted price', () => {
    expect(
      billingOf('standard', { contacted: 3, providers: [quote(true), quote(true), { quote: null }] }),
    ).toEqual({
      complexity: 'standard',
      priceNano: 2_000_000_000,
      reason: '2 quotes compared from 3 providers contacted',
    });
    expect(billingOf('complex', { contacted: 4, providers: [quote(true), quote(true)] }).complexity).toBe(
      'standard',
    );
    expect(billingOf('complex', { contacted: 8, providers: [quote(true), quote(true)] }).priceNano).toBe(
      5_000_000_000,
    );
  });

  it('bills fewer than two comparable quotes as a comparison on the directory’s data', () => {
    const silent = billingOf('standard', { contacted: 3, providers: [{ quote: null }, { quote: null }] });
    expect(silent).toEqual({
      complexity: 'simple',
      priceNano: 500_000_000,
      reason: "no quote to compare, so a comparison on the directory's data",
    });
    expect(billingOf('complex', { contacted: 9, providers: [quote(true), quote(false)] }).complexity).toBe(
      'simple',
    );
  });

  it('bills a brief without contact as accepted', () => {
    expect(billingOf('simple', { contacted: null, providers: [] }).priceNano).toBe(500_000_000);
  });
});
