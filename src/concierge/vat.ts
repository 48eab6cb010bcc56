// The standard VAT rate of each EU member state, for a reply that says "plus VAT" without a rate
// (or says nothing): the rate of the provider's country is added, and the comparison says so. A
// reduced rate that a provider applies (French renovation work at 10 %, Polish housing work at
// 8 %) is used when the reply states it.
//
// Source: European Commission, DG TAXUD, "VAT rates applied in the Member States of the European
// Union" (situation at 1 January 2025), with the changes in force since: Estonia 24 % from
// 1 July 2025, Romania 21 % from 1 August 2025. Check it again when a member state changes its rate.

export const VAT_SOURCE =
  "European Commission (DG TAXUD), 'VAT rates applied in the Member States of the European Union', standard rates in force on 1 September 2025";
export const VAT_TABLE_DATE = '2025-09-01';

/** Standard rates in percent, by ISO 3166-1 alpha-2 code. */
export const STANDARD_VAT: Readonly<Record<string, string>> = {
  AT: '20',
  BE: '21',
  BG: '20',
  CY: '19',
  CZ: '21',
  DE: '19',
  DK: '25',
  EE: '24',
  ES: '21',
  FI: '25.5',
  FR: '20',
  GR: '24',
  HR: '25',
  HU: '27',
  IE: '23',
  IT: '22',
  LT: '21',
  LU: '17',
  LV: '21',
  MT: '18',
  NL: '21',
  PL: '23',
  PT: '23',
  RO: '21',
  SE: '25',
  SI: '22',
  SK: '23',
};

/** The standard VAT rate of a member state, or null outside the EU. */
export function standardVat(country: string | null | undefined): string | null {
  if (!country) return null;
  return STANDARD_VAT[country === 'EL' ? 'GR' : country] ?? null;
}
