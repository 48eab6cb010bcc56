import { describe, expect, it } from 'vitest';
import { boundingBox, haversineKm } from '../geo.ts';
import type { ListingColumns } from '../vectors.ts';
import { type Circle, NearCells } from './near.ts';

/** A seeded generator (mulberry32), so a failure repeats. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The SQL path's test, as ranking in memory made it before the grid: the box, then the distance. */
function within(c: Circle, lat: number, lon: number): number | undefined {
  const box = boundingBox(c.lat, c.lon, c.radius);
  if (lat < box.minLat || lat > box.maxLat || lon < box.minLon || lon > box.maxLon) return undefined;
  const d = haversineKm(c.lat, c.lon, lat, lon);
  return d <= c.radius ? d : undefined;
}

describe('the near filter’s grid', () => {
  const next = random(28);
  const n = 60_000;
  const lats = new Float64Array(n + 20_000);
  const lons = new Float64Array(n + 20_000);
  const centres: [number, number][] = [
    [52.52, 13.405],
    [48.8566, 2.3522],
    [40.4168, -3.7038],
    [64.1466, -21.9426],
    [0.05, 0.05],
    [-33.9, 151.2],
  ];
  for (let at = 0; at < lats.length; at++) {
    if (at % 997 === 0) {
      lats[at] = Number.NaN; // no coordinates: never within
      lons[at] = Number.NaN;
      continue;
    }
    // most around a few cities (many right on a circle's edge), the rest anywhere
    const [lat, lon] = centres[at % centres.length]!;
    const spread = next() < 0.8 ? 0.6 : 40;
    lats[at] = Math.max(-90, Math.min(90, lat + (next() - 0.5) * spread));
    lons[at] = Math.max(-180, Math.min(180, lon + (next() - 0.5) * spread * 1.5));
  }
  // points exactly on the edge of a 25 km circle around Berlin, and a hair inside and out
  for (let k = 0; k < 200; k++) {
    const at = n - 1 - k * 7;
    const bearing = (k / 200) * 2 * Math.PI;
    const step = 25 / 6371.0088 + (k % 3) * 1e-12 - 1e-12;
    lats[at] = 52.52 + (step * Math.cos(bearing) * 180) / Math.PI;
    lons[at] = 13.405 + (step * Math.sin(bearing) * 180) / Math.PI / Math.cos((52.52 * Math.PI) / 180);
  }
  const cols = { lats, lons } as unknown as ListingColumns;
  const circles: Circle[] = [
    { lat: 52.52, lon: 13.405, radius: 25 },
    { lat: 52.52, lon: 13.405, radius: 0.5 },
    { lat: 48.8566, lon: 2.3522, radius: 2 },
    { lat: 40.4168, lon: -3.7038, radius: 10 },
    { lat: 64.1466, lon: -21.9426, radius: 300 },
    { lat: 0.05, lon: 0.05, radius: 500 },
    { lat: -33.9, lon: 151.2, radius: 40 },
    { lat: 48.8566, lon: 2.3522, radius: 3000 },
    { lat: 89.9, lon: 179.9, radius: 100 },
  ];

  function expectSame(cells: NearCells, c: Circle, upTo: number): void {
    const marks = cells.mark(cols, c, upTo);
    const expected: number[] = [];
    for (let at = 0; at < upTo; at++) if (within(c, lats[at]!, lons[at]!) !== undefined) expected.push(at);
    const marked: number[] = [];
    for (let at = 0; at < marks.inside.length; at++) if (marks.inside[at] !== 0) marked.push(at);
    expect(marked).toEqual(expected);
    expect(marks.count).toBe(expected.length);
    const distances = expected.map((at) => marks.distance(cols, at));
    expect(distances).toEqual(expected.map((at) => within(c, lats[at]!, lons[at]!)));
    let outside = 0;
    for (let at = 0; at < upTo; at++) if (Number.isNaN(marks.distance(cols, at))) outside++;
    expect(outside).toBe(upTo - expected.length);
    cells.release(marks);
    expect(marks.inside.every((v) => v === 0)).toBe(true);
  }

  it('marks exactly the listings the box and the haversine take, with the same distances', () => {
    const cells = new NearCells();
    cells.build(cols, n);
    for (const c of circles) expectSame(cells, c, n);
    // a cursor's older snapshot: only positions below it
    expectSame(cells, circles[0]!, n - 5_000);
  });

  it('takes listings added after the grid was built, then rebuilds once many came', () => {
    const cells = new NearCells();
    cells.build(cols, n);
    for (const c of circles) expectSame(cells, c, n + 5_000); // tested one by one
    for (const c of circles) expectSame(cells, c, n + 20_000); // past an eighth: rebuilt
  });

  it('gives searches held at once marks of their own', () => {
    const cells = new NearCells();
    cells.build(cols, n);
    const berlin = cells.mark(cols, circles[0]!, n);
    const paris = cells.mark(cols, circles[2]!, n);
    expect(paris.inside).not.toBe(berlin.inside);
    expect(berlin.inside.reduce((sum, v) => sum + v, 0)).toBe(berlin.count);
    cells.release(berlin);
    expect(paris.inside.reduce((sum, v) => sum + v, 0)).toBe(paris.count);
    cells.release(paris);
    expect(cells.mark(cols, circles[3]!, n).inside).toBe(paris.inside); // reused
  });
});
