// The `near` filter of ranking in memory: the listings within a circle, found from a grid of
// cells (every position under its cell, in cell order, its coordinates copied beside it), so a
// search reads the few thousand listings around the centre instead of the coordinates of every
// match, scattered over the columns (at 1M, a third of a geo search's time went to those reads).
// The test is the one the SQL path makes: inside the bounding box, then the haversine distance
// at most the radius.
import { boundingBox, EARTH_KM, haversineKm, RAD } from '../geo.ts';
import type { ListingColumns } from '../vectors.ts';

/** A cell's side in degrees: about 22 km of latitude, a circle of 25 km spans 4 or 5 cells a side. */
const CELL = 0.2;
const ROWS = Math.ceil(180 / CELL) + 1;
const COLS = Math.ceil(360 / CELL) + 1;

/** Clamped, so a coordinate out of range still falls in a cell a box over it visits. */
const rowOf = (lat: number) => Math.min(ROWS - 1, Math.max(0, Math.floor((lat + 90) / CELL)));
const colOf = (lon: number) => Math.min(COLS - 1, Math.max(0, Math.floor((lon + 180) / CELL)));

export interface Circle {
  lat: number;
  lon: number;
  /** km */
  radius: number;
}

export class NearCells {
  /** positions [0, built) are in the grid; later ones are tested one by one until a rebuild */
  #built = 0;
  /** the lowest cell key held: cell key k's entries are starts[k - first] .. starts[k - first + 1] */
  #first = 0;
  #starts = new Int32Array(1);
  #ats = new Int32Array(0);
  #lats = new Float64Array(0);
  #lons = new Float64Array(0);
  /** Marks no search holds now, to be reused (a search may hold its own across awaits). */
  #free: NearMarks[] = [];

  /** Lays positions [0, upTo) out by cell (a counting sort): about 30 ms at 1M. */
  build(cols: ListingColumns, upTo: number): void {
    const { lats, lons } = cols;
    const keys = new Int32Array(upTo);
    let first = Number.POSITIVE_INFINITY;
    let last = -1;
    for (let at = 0; at < upTo; at++) {
      const lat = lats[at]!;
      const lon = lons[at]!;
      // no coordinates: never within a circle (the SQL's comparisons are false for NaN too)
      const key = Number.isNaN(lat) || Number.isNaN(lon) ? -1 : rowOf(lat) * COLS + colOf(lon);
      keys[at] = key;
      if (key < 0) continue;
      if (key < first) first = key;
      if (key > last) last = key;
    }
    if (last < 0) first = 0;
    const starts = new Int32Array(last - first + 2);
    for (let at = 0; at < upTo; at++) if (keys[at]! >= 0) starts[keys[at]! - first + 1]!++;
    for (let k = 1; k < starts.length; k++) starts[k]! += starts[k - 1]!;
    const total = starts[starts.length - 1]!;
    const fill = starts.slice(0, starts.length - 1);
    const ats = new Int32Array(total);
    const cellLats = new Float64Array(total);
    const cellLons = new Float64Array(total);
    for (let at = 0; at < upTo; at++) {
      const key = keys[at]!;
      if (key < 0) continue;
      const e = fill[key - first]!++;
      ats[e] = at;
      cellLats[e] = lats[at]!;
      cellLons[e] = lons[at]!;
    }
    this.#built = upTo;
    this.#first = first;
    this.#starts = starts;
    this.#ats = ats;
    this.#lats = cellLats;
    this.#lons = cellLons;
  }

  /**
   * The positions below `upTo` within `circle`, marked (held by the caller until `release`).
   * Their distances are computed when asked (`NearMarks.distance`): most are never ranked. A
   * listing is taken in or left out by the haversine's own inequality (sin² of half the angle
   * at most that of the radius's) with the small half-angles taken for their sines and bounds
   * of the cosine of its latitude over the box, within a margin that covers both
   * approximations; only the listings inside the margin have their distance computed here.
   */
  mark(cols: ListingColumns, circle: Circle, upTo: number): NearMarks {
    if (upTo - this.#built > Math.max(10_000, this.#built / 8)) this.build(cols, upTo);
    const marks = this.#free.pop() ?? new NearMarks();
    if (marks.inside.length < upTo) marks.inside = new Uint8Array(Math.ceil(upTo * 1.25));
    marks.circle = circle;
    const { lat: lat0, lon: lon0, radius } = circle;
    const box = boundingBox(lat0, lon0, radius);
    const inside = marks.inside;
    // a = sin²(Δφ/2) + cos φ0 cos φ sin²(Δλ/2); within the radius when a <= sin²(radius / 2R)
    const half = RAD / 2;
    const widest = Math.max(box.maxLat - lat0, box.maxLon - lon0) * half;
    // sin x = x (1 - x²/6 ...): sin² x within x²/3 of x², relatively; far more room is left
    const approximate = widest < 0.1 && radius / (2 * EARTH_KM) < 0.1;
    const limit = Math.sin(radius / (2 * EARTH_KM)) ** 2;
    const slack = widest * widest + 1e-9;
    const within = limit * (1 - slack);
    const beyond = limit * (1 + slack);
    const cos0 = Math.cos(lat0 * RAD);
    const cosA = Math.cos(Math.max(-90, box.minLat) * RAD);
    const cosB = Math.cos(Math.min(90, box.maxLat) * RAD);
    // over the box's latitudes the cosine lies between these (the highest where it crosses 0)
    const cosLow = cos0 * Math.min(cosA, cosB) * (1 - 1e-9);
    const cosHigh = cos0 * (box.minLat <= 0 && box.maxLat >= 0 ? 1 : Math.max(cosA, cosB)) * (1 + 1e-9);
    let count = 0;
    const add = (at: number, lat: number, lon: number) => {
      // written so that NaN fails it (the haversine of NaN is no distance either)
      if (!(lat >= box.minLat && lat <= box.maxLat && lon >= box.minLon && lon <= box.maxLon)) return;
      let sure = false;
      if (approximate) {
        const y = (lat - lat0) * half;
        const x = (lon - lon0) * half;
        const y2 = y * y;
        const x2 = x * x;
        if (y2 + cosLow * x2 > beyond) return;
        sure = y2 + cosHigh * x2 < within;
      }
      if (!sure && !(haversineKm(lat0, lon0, lat, lon) <= radius)) return;
      if (count === marks.list.length) {
        const grown = new Int32Array(Math.max(1024, count * 2));
        grown.set(marks.list);
        marks.list = grown;
      }
      marks.list[count++] = at;
      inside[at] = 1;
    };
    const starts = this.#starts;
    const first = this.#first;
    const cells = starts.length - 1;
    const ats = this.#ats;
    const lats = this.#lats;
    const lons = this.#lons;
    const c0 = colOf(box.minLon);
    const c1 = colOf(box.maxLon);
    for (let r = rowOf(box.minLat); r <= rowOf(box.maxLat); r++) {
      // a row's cells from c0 to c1 are one run of entries
      const k0 = Math.max(0, r * COLS + c0 - first);
      const k1 = Math.min(cells - 1, r * COLS + c1 - first);
      if (k0 > k1) continue;
      for (let e = starts[k0]!; e < starts[k1 + 1]!; e++) {
        const at = ats[e]!;
        if (at < upTo) add(at, lats[e]!, lons[e]!);
      }
    }
    for (let at = this.#built; at < upTo; at++) add(at, cols.lats[at]!, cols.lons[at]!);
    marks.count = count;
    return marks;
  }

  /** Unmarks `marks` (all 0 again) for another search to take. */
  release(marks: NearMarks): void {
    for (let i = 0; i < marks.count; i++) marks.inside[marks.list[i]!] = 0;
    marks.count = 0;
    this.#free.push(marks);
  }
}

/** The listings within a circle, as `NearCells.mark` found them. */
export class NearMarks {
  /** 1 at each position within the circle, 0 elsewhere */
  inside = new Uint8Array(0);
  /** the positions marked, `count` of them */
  list = new Int32Array(0);
  count = 0;
  circle: Circle = { lat: 0, lon: 0, radius: 0 };

  /** A marked position's distance (else NaN): the haversine, as the SQL's. */
  distance(cols: ListingColumns, at: number): number {
    if (this.inside[at] !== 1) return Number.NaN;
    return haversineKm(this.circle.lat, this.circle.lon, cols.lats[at]!, cols.lons[at]!);
  }
}
