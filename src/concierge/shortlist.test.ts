// The shortlist holds providers of the brief's trade only, on the demo directory: a firm whose own
// trade is another (a locksmith, a demolition firm) that lists the brief's class beside it is left
// out. The hits are every demo listing of the class near the place, more than a search returns.
import { describe, expect, it } from 'vitest';
import { DEMO_SEED } from '../directory/demo-rows.ts';
import { demoListing } from '../directory/demo.ts';
import { haversineKm } from '../directory/geo.ts';
import type { ListingRecord } from '../directory/store.ts';
import { fitting } from './stages/searching.ts';
import type { WorkflowRow } from './store.ts';
import { understand } from './understand.ts';

const today = new Date('2026-11-26T12:00:00Z');
const demo: ListingRecord[] = Array.from({ length: 20_000 }, (_, i) => demoListing(DEMO_SEED, i));
const row = { hints: {}, contact: false } as unknown as WorkflowRow;
const own = (l: ListingRecord) => (l.activities.find((a) => a.primary) ?? l.activities[0])?.code ?? '';

function shortlistOf(brief: string) {
  const u = understand(brief, {}, null, today);
  const trade = u.trade!;
  const place = u.place!;
  const near = demo.filter(
    (l) =>
      l.activities.some((a) => a.code.startsWith(trade.activity)) &&
      haversineKm(place.lat, place.lon, l.geo.lat, l.geo.lon) <= u.radius_km,
  );
  const hits = near.map((l) => ({ id: l.id, distance_km: null }));
  const { kept, dropped } = fitting(row, u, trade, hits, near, new Set());
  return { u, near, kept: kept.map((k) => near.find((l) => l.id === k.listing_id)!), dropped };
}

describe('the shortlist on the demo directory', () => {
  it('holds no locksmith or demolition firm for plumbers in Paris', () => {
    const { near, kept, dropped } = shortlistOf('Find three plumbers in Paris to fix a leaking pipe.');
    // the demo has two firms near Paris whose own trade is another, with plumbing beside it
    expect(near.map((l) => `${l.name}: ${own(l)}`)).toEqual(
      expect.arrayContaining(['Serrurier Clichy: 95.29', 'Démolition Michel: 43.12']),
    );
    expect(kept.map((l) => l.name)).toEqual(['Moreau Plombier', 'Plombier Bobigny']);
    expect(dropped.trade).toBe(near.length - kept.length);
  });

  it('holds only the trade asked for, whatever the language and the trade', () => {
    const briefs = [
      'Je cherche trois plombiers à Paris pour une fuite sous l’évier.',
      'Wir suchen drei Elektriker in Berlin für eine neue Steckdose.',
      'Cerchiamo tre idraulici a Milano per un rubinetto che gocciola.',
      'Szukamy trzech ślusarzy w Warszawie do wymiany zamka.',
      'Buscamos tres pintores en Valencia para pintar un piso.',
      'Wij zoeken drie loodgieters in Rotterdam voor een lekkende kraan.',
      'Procuro três canalizadores em Lisboa para uma fuga de água.',
      'Find three locksmiths in Vienna, we are locked out.',
    ];
    let sidelines = 0;
    for (const brief of briefs) {
      const { u, near, kept } = shortlistOf(brief);
      expect(kept.length, brief).toBeGreaterThan(0);
      for (const l of kept)
        expect(own(l).startsWith(u.trade!.activity), `${brief}: ${l.name} is ${own(l)}`).toBe(true);
      sidelines += near.length - kept.length;
    }
    // the check was put to work: firms of other trades with these as sidelines were near
    expect(sidelines).toBeGreaterThan(0);
  });
});
