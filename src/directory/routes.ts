// The Search and Places routes of the directory API. Mounted after the OpenAPI validator
// (which has already checked and coerced the query) and after authentication (the principal
// is in res.locals); each successful call is metered with recordUsage at the spec's price.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type {
  GeocodePlaceData,
  GetPlaceDetailsData,
  ReverseGeocodePlaceData,
} from '../../generated/directory/client/types.gen.ts';
import type { Db } from '../platform/db.ts';
import { setNextLink } from '../platform/pagination.ts';
import type { Principal } from '../platform/principal.ts';
import { recordUsage } from '../platform/metering.ts';
import { geocode, getPhoto, getPlaceDetails, reverseGeocode } from './places.ts';
import { placesPriceNano, SEARCH_PRICE_NANO } from './pricing.ts';
import { searchCacheOn, searchListings, type SearchParams } from './search.ts';

export interface DirectoryRouterOptions {
  db: Db;
  /** The public origin of the API for photo URLs; the request's own origin when unset. */
  publicBaseUrl?: string | undefined;
  /** The clock (tests pin it). */
  now?: () => Date;
}

type Handler = (req: Request, res: Response) => Promise<void>;

/** How many Places calls the account made this calendar month (UTC), before this one. */
async function placesCallsThisMonth(db: Db, accountId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from usage_records
     where account_id = $1 and service = 'directory' and model = 'places' and day >= date_trunc('month', now() at time zone 'utc')::date`,
    [accountId],
  );
  return row?.n ?? 0;
}

/** The JSON (UTF-8) of search pages already sent and validated, by page object. */
const sentBodies = new WeakMap<object, Buffer>();

export function createDirectoryRouter(options: DirectoryRouterOptions): Router {
  const { db } = options;
  const now = options.now ?? (() => new Date());
  const router = express.Router();
  const baseUrl = (req: Request) =>
    options.publicBaseUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;

  const metered =
    (iface: 'search' | 'places', endpoint: string, handler: Handler) =>
    async (req: Request, res: Response, next: NextFunction) => {
      const started = performance.now();
      try {
        await handler(req, res);
        const principal = res.locals.principal as Principal | undefined;
        if (!principal) return; // unsecured use (tests); the security handler always sets one
        const costNano =
          iface === 'search'
            ? principal.plan === 'search_unlimited'
              ? 0
              : SEARCH_PRICE_NANO
            : placesPriceNano(await placesCallsThisMonth(db, principal.accountId));
        await recordUsage(db, principal, {
          service: 'directory',
          model: iface,
          endpoint,
          units: 1,
          costNano,
          status: res.statusCode,
          latencyMs: performance.now() - started,
        });
      } catch (err) {
        next(err);
      }
    };

  router.get(
    '/v1/search',
    metered('search', '/v1/search', async (req, res) => {
      // The validator fills in radius_km's default; only a radius the caller sent counts as one.
      const params = { ...(req.query as SearchParams) };
      // (parsed only when the raw query could name it: most searches do not)
      const raw = req.originalUrl.slice(req.originalUrl.indexOf('?') + 1);
      if (!/radius|%/i.test(raw) || !new URLSearchParams(raw).has('radius_km')) delete params.radius_km;
      const page = await searchListings(db, params, now(), { baseUrl: baseUrl(req) });
      setNextLink(req, res, page);
      // A page served before (the same object, from the rendered-page cache) goes out as the
      // JSON kept when it was first sent, validated then; only a 200 is kept.
      const body = sentBodies.get(page);
      if (body !== undefined) {
        res.type('application/json').send(body);
        return;
      }
      if (searchCacheOn()) {
        res.once('finish', () => {
          if (res.statusCode === 200) sentBodies.set(page, Buffer.from(JSON.stringify(page)));
        });
      }
      res.json(page);
    }),
  );

  router.get(
    '/v1/places/details',
    metered('places', '/v1/places/details', async (req, res) => {
      const { id } = req.query as GetPlaceDetailsData['query'];
      res.json(await getPlaceDetails(db, id, now(), { baseUrl: baseUrl(req) }));
    }),
  );

  router.get(
    '/v1/places/geocode',
    metered('places', '/v1/places/geocode', async (req, res) => {
      const query = req.query as unknown as GeocodePlaceData['query'];
      res.json(await geocode(db, query.q, { country: query.country, limit: query.limit }));
    }),
  );

  router.get(
    '/v1/places/reverse',
    metered('places', '/v1/places/reverse', async (req, res) => {
      const query = req.query as unknown as ReverseGeocodePlaceData['query'];
      res.json(
        await reverseGeocode(db, Number(query.lat), Number(query.lon), {
          limit: query.limit,
          now: now(),
          baseUrl: baseUrl(req),
        }),
      );
    }),
  );

  router.get(
    '/v1/places/photos/:id',
    metered('places', '/v1/places/photos/{id}', async (req, res) => {
      const photo = await getPhoto(db, String(req.params.id));
      res.setHeader('Cache-Control', 'private, max-age=86400');
      res.type('image/jpeg').send(photo.jpeg);
    }),
  );

  return router;
}
