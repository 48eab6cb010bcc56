// Distances on the earth, once: the great-circle (haversine) distance in JavaScript and as SQL
// (the same formula, term for term, so ranking in memory gives the SQL path's figures), and the
// latitude/longitude box around a circle that lets an index answer first.

/** The earth's mean radius in kilometres (IUGG). */
export const EARTH_KM = 6371.0088;
export const RAD = Math.PI / 180;

/** Great-circle distance in kilometres from (lat0, lon0) to (lat, lon). */
export function haversineKm(lat0: number, lon0: number, lat: number, lon: number): number {
  const a =
    Math.sin(((lat - lat0) * RAD) / 2) ** 2 +
    Math.cos(lat0 * RAD) * Math.cos(lat * RAD) * Math.sin(((lon - lon0) * RAD) / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** `haversineKm` as a SQL expression over four float8 expressions (columns or parameters). */
export function haversineSql(lat0: string, lon0: string, lat: string, lon: string): string {
  return `(2 * ${EARTH_KM} * asin(least(1, sqrt(power(sin(radians(${lat} - ${lat0}) / 2), 2) + cos(radians(${lat0})) * cos(radians(${lat})) * power(sin(radians(${lon} - ${lon0}) / 2), 2)))))`;
}

/** The box holding every point within `radiusKm` of (lat, lon) (a degree of latitude is about 111 km). */
export interface Box {
  minLat: number;
  maxLat: number;
  minLon: number;
  maxLon: number;
}

export function boundingBox(lat: number, lon: number, radiusKm: number): Box {
  const dLat = radiusKm / 111.0;
  // (lat * PI) / 180, not lat * RAD: they differ in the last bit, and the SQL path's box is this one
  const dLon = radiusKm / (111.0 * Math.max(0.01, Math.cos((lat * Math.PI) / 180)));
  return { minLat: lat - dLat, maxLat: lat + dLat, minLon: lon - dLon, maxLon: lon + dLon };
}
