// The Search and Places routes of the directory API, typed by the generated types (the validator
// has already checked and coerced the query; the security handler has set the principal). Each
// successful call is metered with recordUsage at the spec's price, once its answer is sent.
import type { Response } from 'express';
import type { Db } from '../platform/db.ts';
import { recordUsage } from '../platform/metering.ts';
import { callsThisMonth } from '../platform/usage-records.ts';
import { nextLinkOf } from '../platform/pagination.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
import { geocode, getPhoto, getPlaceDetails, reverseGeocode } from './places.ts';
import { placesPriceNano, SEARCH_PRICE_NANO } from './pricing.ts';
import type { Search, SearchParams } from './search/search.ts';

export interface DirectoryRouterOptions {
  db: Db;
  /** The search of this database. */
  search: Search;
  /**
   * The public origin of the API for photo URLs: PUBLIC_DIRECTORY_URL, else the address this
   * service listens on; never the request's Host, which whoever sends the request chooses.
   */
  publicBaseUrl: () => string;
  /** The clock (tests pin it). */
  now?: () => Date;
}

/** The JSON (UTF-8) of search pages already sent and validated, by page object. */
const sentBodies = new WeakMap<object, Buffer>();

export function createDirectoryRouter(options: DirectoryRouterOptions) {
  const { db, search } = options;
  const now = options.now ?? (() => new Date());
  const api: OperationRouter = operationRouter();
  const baseUrl = () => options.publicBaseUrl();

  /** Meters a call once its answer is sent: search at its price, places by the month's count. */
  const meter =
    (iface: 'search' | 'places', endpoint: string, res: Response, started: number) => async () => {
      const principal = res.locals.principal;
      if (!principal) return; // unsecured use (tests); the security handler always sets one
      const costNano =
        iface === 'search'
          ? principal.plan === 'search_unlimited'
            ? 0
            : SEARCH_PRICE_NANO
          : placesPriceNano(await callsThisMonth(db, principal.accountId, 'directory', 'places'));
      await recordUsage(db, principal, {
        service: 'directory',
        model: iface,
        endpoint,
        units: 1,
        costNano,
        status: res.statusCode,
        latencyMs: performance.now() - started,
      });
    };

  api.on('searchListings', async ({ query, req, res, after }) => {
    const started = performance.now();
    after(meter('search', '/v1/search', res, started));
    // The validator fills in radius_km's default; only a radius the caller sent counts as one.
    const params: SearchParams = { ...query };
    // (parsed only when the raw query could name it: most searches do not)
    const raw = req.originalUrl.slice(req.originalUrl.indexOf('?') + 1);
    if (!/radius|%/i.test(raw) || !new URLSearchParams(raw).has('radius_km')) delete params.radius_km;
    const page = await search.search(params, now(), { baseUrl: baseUrl() });
    const headers = nextLinkOf(req, page);
    // A page served before (the same object, from the rendered-page cache) goes out as the
    // JSON kept when it was first sent, validated then; only a 200 is kept.
    const body = sentBodies.get(page);
    if (body !== undefined) {
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.type('application/json').send(body);
      return SENT;
    }
    if (search.cacheOn) {
      res.once('finish', () => {
        if (res.statusCode === 200) sentBodies.set(page, Buffer.from(JSON.stringify(page)));
      });
    }
    return { status: 200, body: page, headers };
  });

  api.on('getPlaceDetails', async ({ res, query, after }) => {
    after(meter('places', '/v1/places/details', res, performance.now()));
    return { status: 200, body: await getPlaceDetails(db, query.id, now(), { baseUrl: baseUrl() }) };
  });

  api.on('geocodePlace', async ({ res, query, after }) => {
    after(meter('places', '/v1/places/geocode', res, performance.now()));
    return { status: 200, body: await geocode(db, query.q, { country: query.country, limit: query.limit }) };
  });

  api.on('reverseGeocodePlace', async ({ res, query, after }) => {
    after(meter('places', '/v1/places/reverse', res, performance.now()));
    return {
      status: 200,
      body: await reverseGeocode(db, Number(query.lat), Number(query.lon), {
        limit: query.limit,
        now: now(),
        baseUrl: baseUrl(),
      }),
    };
  });

  api.on('getPlacePhoto', async ({ res, path, after }) => {
    after(meter('places', '/v1/places/photos/{id}', res, performance.now()));
    const photo = await getPhoto(db, path.id);
    return {
      status: 200,
      body: photo.jpeg,
      type: 'image/jpeg',
      headers: { 'Cache-Control': 'private, max-age=86400' },
    };
  });

  return api;
}
