// Prices of the directory's Search and Places calls in integer nano-EUR (1 EUR = 10^9).

/** 0.001 EUR a search request, pay-as-you-go. */
export const SEARCH_PRICE_NANO = 1_000_000;

/** Places, per 1,000 calls in a calendar month, graduated (the spec's introduction). */
export const PLACES_TIERS: readonly { upTo: number; perThousandNano: number }[] = [
  { upTo: 100_000, perThousandNano: 500_000_000 }, // 0.50 EUR per 1,000: starter tier
  { upTo: 1_000_000, perThousandNano: 300_000_000 }, // 0.30 EUR from 100,001
  { upTo: 10_000_000, perThousandNano: 200_000_000 }, // 0.20 EUR from 1,000,001
  { upTo: Infinity, perThousandNano: 100_000_000 }, // 0.10 EUR above 10,000,000
];

/**
 * The price of one Places call, given how many Places calls the account already made this
 * calendar month (so the 100,001st call of the month, `placesPriceNano(100_000)`, is the first
 * at 0.30 EUR per 1,000).
 */
export function placesPriceNano(callsThisMonth: number): number {
  const ordinal = callsThisMonth + 1;
  const tier = PLACES_TIERS.find((t) => ordinal <= t.upTo) ?? PLACES_TIERS[PLACES_TIERS.length - 1];
  return (tier?.perThousandNano ?? 0) / 1000;
}
