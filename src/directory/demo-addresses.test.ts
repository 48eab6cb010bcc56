// Demo addresses as the post writes them (issue 28): the municipality as the city, a district
// apart, postal codes in the municipality's real range, streets of the place.
import { describe, expect, it } from 'vitest';
import { CITY_STREETS } from './data/addresses.ts';
import { municipalityOf } from './data/gazetteer.ts';
import { cityNamed, nameKey, placesNamed } from './data/place-names.ts';
import { demoListing } from './demo.ts';
import { withDistrict } from './import.ts';

const listings = Array.from({ length: 20_000 }, (_, i) => demoListing('eurus-demo', i));

describe('demo addresses', () => {
  it('write the municipality as the city and the district apart', () => {
    const inDistricts = listings.filter((l) => l.address.district !== null);
    expect(inDistricts.length).toBeGreaterThan(200);
    for (const l of inDistricts) {
      const district = placesNamed(nameKey(l.address.district!), l.address.country).find(
        (p) => p.municipalityId !== null && municipalityOf(p).name === l.address.city,
      );
      expect(district, `${l.address.district} in ${l.address.city}`).toBeDefined();
      expect(cityNamed(l.address.city, l.address.country)!.place.municipalityId).toBeNull();
      expect(l.address.formatted).toContain(`${l.address.postal_code} ${l.address.city}`);
    }
    const berlin = listings.filter((l) => l.address.city === 'Berlin');
    expect(berlin.length).toBeGreaterThan(20);
    // the Berlin listings of districts are Berlin's, not towns of their own
    expect(berlin.filter((l) => l.address.district !== null).length).toBeGreaterThan(10);
  });

  it('give postal codes in the real range and streets of the place', () => {
    const inRange = (l: (typeof listings)[number], lo: number, hi: number) =>
      Number(l.address.postal_code.replace(/\D/g, '')) >= lo &&
      Number(l.address.postal_code.replace(/\D/g, '')) <= hi;
    for (const [city, lo, hi] of [
      ['Berlin', 10115, 14199],
      ['München', 80331, 81929],
      ['Hamburg', 20095, 22769],
    ] as const) {
      const here = listings.filter((l) => l.address.city === city);
      expect(here.length, city).toBeGreaterThan(5);
      for (const l of here) expect(inRange(l, lo, hi), `${city} ${l.address.postal_code}`).toBe(true);
    }
    for (const l of listings.filter((x) => x.address.city === 'München'))
      expect(CITY_STREETS['DE:munchen']).toContain(l.address.street);
    // a street of München is nowhere else
    expect(
      listings.filter((l) => l.address.street === 'Lindwurmstraße' && l.address.city !== 'München'),
    ).toEqual([]);
    for (const l of listings.filter((x) => x.address.city === 'Paris'))
      expect(l.address.postal_code).toMatch(/^750(0[1-9]|1\d|20)$/);
  });

  it('the import writes a district given as the city as the post does', () => {
    const l = listings.find((x) => x.address.city === 'Berlin' && x.address.district !== null)!;
    const old = { ...l, address: { ...l.address, city: l.address.district!, district: null } };
    expect(withDistrict(old).address).toMatchObject({ city: 'Berlin', district: l.address.district });
    expect(withDistrict(l).address).toEqual(l.address);
  });
});
