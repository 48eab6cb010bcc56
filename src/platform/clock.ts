// The one clock of the stores: seconds since the epoch, as every `created` column keeps them.

/** Now, in whole seconds since the epoch. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A time in whole seconds as RFC 3339 UTC without fractions (`2026-11-26T09:00:00Z`). */
export const isoSeconds = (unix: number): string =>
  new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
