// The score's formula where JavaScript computes it (the SQL path writes the same in SQL).

/** Reviews the Bayesian average trusts as much as the directory-wide mean (C in the spec). */
export const BAYES_C = 10;
/** Reciprocal rank fusion's k. */
export const RRF_K = 60;

/** The trust part of the score, as the SQL computes it. */
export function trustOf(bayes: number, reviews: number, claimed: boolean, response: number | null): number {
  return (
    (0.5 * (bayes - 1)) / 4 +
    0.2 * Math.min(1, Math.log(1 + reviews) / Math.log(1001)) +
    0.15 * (claimed ? 1 : 0) +
    0.15 * (response === null ? 0 : 1 / (1 + response / 60))
  );
}

/**
 * `round(x::numeric, 6)::float8` as PostgreSQL computes it: the float8 goes to numeric with 15
 * significant digits, is rounded half away from zero, and comes back correctly rounded.
 */
export function round6(x: number): number {
  const scaled = x * 1e6;
  const frac = scaled - Math.floor(scaled);
  if (Math.abs(frac - 0.5) > 1e-4 && Number.isFinite(scaled)) return Math.round(scaled) / 1e6;
  const text = x.toPrecision(15);
  if (text.includes('e')) return Math.round(scaled) / 1e6;
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  let digits = BigInt(whole + fraction.padEnd(6, '0').slice(0, 6));
  if ((fraction[6] ?? '0') >= '5') digits += 1n;
  return ((negative ? -1 : 1) * Number(digits)) / 1e6;
}
