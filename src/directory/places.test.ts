import jpeg from 'jpeg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../platform/db.ts';
import { demoListing } from './demo.ts';
import { foldText } from '../embeddings/fold.ts';
import { geocode, getPhoto, getPlaceDetails, reverseGeocode } from './places.ts';
import { placesPriceNano } from './pricing.ts';
import { testDirectory } from '../../contract-tests/support/directory.ts';

const NOW = new Date('2026-11-20T10:00:00Z');
const opts = { baseUrl: 'https://directory.test' };
let db: Db;
beforeAll(async () => {
  db = await testDirectory(300, 'places');
});
afterAll(async () => {
  await db.close();
});

const claimedListing = () => {
  for (let i = 0; ; i++) {
    const l = demoListing('places', i);
    if (l.claimed && l.opening_hours) return l;
  }
};
const unclaimedListing = () => {
  for (let i = 0; ; i++) {
    const l = demoListing('places', i);
    if (!l.claimed) return l;
  }
};

describe('details', () => {
  it('returns the full profile with hours computed now and photo URLs where claimed', async () => {
    const stored = claimedListing();
    const details = await getPlaceDetails(db, stored.id, NOW, opts);
    expect(details.name).toBe(stored.name);
    expect(details.opening_hours?.time_zone).toBe(stored.opening_hours?.time_zone);
    expect(typeof details.opening_hours?.open_now).toBe('boolean');
    expect(details.photos.length).toBeGreaterThan(0);
    expect(details.photos[0]?.url).toBe(`https://directory.test/v1/places/photos/${details.photos[0]?.id}`);
  });

  it('has no photos for an unclaimed listing, and 404 for an unknown id', async () => {
    const details = await getPlaceDetails(db, unclaimedListing().id, NOW, opts);
    expect(details.photos).toEqual([]);
    await expect(getPlaceDetails(db, 'lst_00000000000000000000000000', NOW, opts)).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe('photos', () => {
  it('serves a deterministic JPEG of the stated size', async () => {
    const photo = claimedListing().photos[0]!;
    const a = await getPhoto(db, photo.id);
    const b = await getPhoto(db, photo.id);
    expect(a.jpeg.equals(b.jpeg)).toBe(true);
    const decoded = jpeg.decode(a.jpeg);
    expect([decoded.width, decoded.height]).toEqual([photo.width, photo.height]);
    await expect(getPhoto(db, 'pho_00000000000000000000000000')).rejects.toMatchObject({ status: 404 });
  });
});

describe('geocode', () => {
  it('finds cities accent- and case-insensitively, the largest first', async () => {
    const r = await geocode(db, 'munchen');
    expect(r.data[0]).toMatchObject({
      name: 'München',
      kind: 'city',
      country: 'DE',
      region: 'Bayern',
      listing_id: null,
    });
    expect((await geocode(db, 'BRUXELLES')).data[0]).toMatchObject({ name: 'Bruxelles', country: 'BE' });
    expect((await geocode(db, 'Łódź')).data[0]).toMatchObject({ country: 'PL' });
  });

  it('tolerates small typos and filters by country', async () => {
    expect((await geocode(db, 'Amsterdma')).data[0]).toMatchObject({ name: 'Amsterdam' });
    const paris = await geocode(db, 'paris', { country: 'FR', limit: 3 });
    expect(paris.data.every((c) => c.country === 'FR')).toBe(true);
    expect(paris.data[0]?.name).toBe('Paris');
  });

  it('finds listings by name and by address, with their listing id', async () => {
    const target = demoListing('places', 5);
    const byName = await geocode(db, target.name, { limit: 20 });
    expect(byName.data.some((c) => c.listing_id === target.id && c.kind === 'listing')).toBe(true);
    const byAddress = await geocode(db, target.address.formatted.split(',')[0]!, { limit: 20 });
    expect(byAddress.data.some((c) => c.listing_id === target.id && c.kind === 'address')).toBe(true);
  });

  it('matches addresses by word prefixes, in any order, without scanning for substrings', async () => {
    const target = demoListing('places', 5);
    const street = foldText(target.address.street);
    const prefix = street
      .split(/[^a-z]+/)
      .find((w) => w.length >= 5)!
      .slice(0, 4);
    const q = `${target.address.postal_code} ${prefix}`;
    const r = await geocode(db, q, { limit: 40 });
    expect(
      r.data.some((c) => c.listing_id === target.id && c.kind === 'address'),
      q,
    ).toBe(true);
  });
});

describe('reverse geocode', () => {
  it('names the nearest place and lists nearby listings nearest first', async () => {
    const target = demoListing('places', 11);
    const r = await reverseGeocode(db, target.geo.lat, target.geo.lon, { limit: 5, now: NOW, ...opts });
    expect(r.place.country).toBe(target.address.country);
    expect(r.place.time_zone).toMatch(/^Europe\//);
    expect(r.listings[0]?.listing.id).toBe(target.id);
    expect(r.listings[0]?.distance_km).toBeLessThan(0.01);
    const distances = r.listings.map((l) => l.distance_km);
    expect([...distances].sort((a, b) => a - b)).toEqual(distances);
    expect(distances.every((d) => d <= 25)).toBe(true);
  });
});

describe('pricing', () => {
  it('graduates Places calls by the month’s volume', () => {
    expect(placesPriceNano(0)).toBe(500_000);
    expect(placesPriceNano(99_999)).toBe(500_000);
    expect(placesPriceNano(100_000)).toBe(300_000);
    expect(placesPriceNano(999_999)).toBe(300_000);
    expect(placesPriceNano(1_000_000)).toBe(200_000);
    expect(placesPriceNano(10_000_000)).toBe(100_000);
  });
});
