// The hub's own tools: the Directory API's search, place details, geocode and reverse geocode,
// called over HTTP through the generated directory client with the caller's own key, so the
// directory's scopes (`search`, `places`), limits and prices apply as if the caller had called it.
import { Ajv, type ValidateFunction } from 'ajv';
import {
  geocodePlace,
  getPlaceDetails,
  reverseGeocodePlace,
  searchListings,
} from '../../generated/directory/client/sdk.gen.ts';
import { createClient, createConfig } from '../../generated/directory/client/client/index.ts';
import type { CountryCode, SearchHit } from '../../generated/directory/client/types.gen.ts';

/** The server_label of the hub in an `mcp` tool: no registered server may take it. */
export const HUB_LABEL = 'eurus';

export const HUB_NAME = 'eurus-hub';
export const HUB_VERSION = '1.0.0';

export interface HubCaller {
  /** The caller's own API key, sent to the directory as it is. */
  bearer: string;
  signal: AbortSignal;
}

export interface HubTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The tool's structured result; throws a HubToolError that says what went wrong. */
  run(
    args: Record<string, unknown>,
    caller: HubCaller,
    directoryUrl: string,
  ): Promise<Record<string, unknown>>;
}

/** A tool call that failed in a way the caller should read (the directory's own error, bad arguments). */
export class HubToolError extends Error {
  override name = 'HubToolError';
}

/** The directory's answer, or a HubToolError with its error message (403 scope, 429 limits, ...). */
async function directory<T>(
  call: Promise<{ data?: T | undefined; error?: unknown; response?: Response }>,
  what: string,
): Promise<NonNullable<T>> {
  let result: { data?: T | undefined; error?: unknown; response?: Response };
  try {
    result = await call;
  } catch (err) {
    throw new HubToolError(
      `The Directory API could not be reached for ${what}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (result.data !== undefined && result.data !== null && result.response?.ok === true) return result.data;
  const body = result.error as { error?: { message?: string; code?: string } } | undefined;
  const status = result.response?.status ?? 0;
  throw new HubToolError(
    `The Directory API answered ${status} to ${what}: ${body?.error?.message ?? 'no message'}${
      body?.error?.code ? ` (${body.error.code})` : ''
    }`,
  );
}

function clientFor(directoryUrl: string, caller: HubCaller) {
  return createClient(
    createConfig({
      baseUrl: directoryUrl,
      headers: { Authorization: `Bearer ${caller.bearer}` },
      signal: caller.signal,
    }),
  );
}

const COORDINATES = /^\s*(-?\d{1,2}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$/;

/**
 * A place name or address as coordinates, through the directory's geocoding: the whole text
 * first, then shorter tails of it ("Marienplatz, Munich" then "Munich"), so a street or square
 * the gazetteer lacks still resolves to its town.
 */
async function resolveNear(
  near: string,
  country: string | undefined,
  directoryUrl: string,
  caller: HubCaller,
): Promise<{ text: string; resolved: string; lat: number; lon: number }> {
  const coordinates = COORDINATES.exec(near);
  if (coordinates) {
    return { text: near, resolved: near.trim(), lat: Number(coordinates[1]), lon: Number(coordinates[2]) };
  }
  const parts = near
    .split(/,|\bin\b/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const tries = [near.trim(), ...parts.slice(1).map((_, i) => parts.slice(i + 1).join(', '))];
  const client = clientFor(directoryUrl, caller);
  for (const q of [...new Set(tries)].slice(0, 4)) {
    const page = await directory(
      geocodePlace({ client, query: { q: q.slice(0, 256), limit: 1, ...(country ? { country } : {}) } }),
      `geocode '${q}'`,
    );
    const best = page.data[0];
    if (best !== undefined) return { text: near, resolved: best.formatted, lat: best.lat, lon: best.lon };
  }
  throw new HubToolError(`No place called '${near}' was found to search near.`);
}

function compactHit(hit: SearchHit): Record<string, unknown> {
  const listing = hit.listing;
  return {
    id: listing.id,
    name: listing.name,
    address: listing.address.formatted,
    district: listing.address.district,
    distance_km: hit.signals.distance_km,
    rating: listing.rating,
    review_count: hit.signals.review_count,
    phone: listing.phone,
    website: listing.website,
    activities: listing.activities.map((a) => a.name),
  };
}

/** A tool's arguments: an object of these properties, the `required` ones among them, no others. */
const argsSchema = (properties: Record<string, unknown>, required: string[]): Record<string, unknown> => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** The `limit` argument: how many of `what`, 1 to 20, 5 when omitted. */
const limitArg = (what: string) => ({
  type: 'integer',
  minimum: 1,
  maximum: 20,
  description: `How many ${what}, 5 when omitted.`,
});

/** A text argument of 1 to `max` characters. */
const textArg = (max: number, description: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: max,
  description,
});

const COUNTRY_ARG = {
  type: 'string',
  pattern: '^[A-Z]{2}$',
  description: 'Only in this country (ISO 3166-1 alpha-2).',
};

export const HUB_TOOLS: readonly HubTool[] = [
  {
    name: 'search_directory',
    title: 'Search the directory',
    description:
      'Find businesses and places (bakeries, plumbers, restaurants, shops, services) by what they do or ' +
      "their name, in any of the directory's languages, in a city or district, near a place, or in a place " +
      'named in the query itself ("plumber in Berlin", "Zahnarzt München", "canalizador em Lisboa"), ' +
      'optionally only those open now or well rated. The result says how the query was understood ' +
      '(the place read from it, typos corrected) in `interpreted`. ' +
      'Billed as a directory search on your key (scope search).',
    inputSchema: argsSchema(
      {
        query: textArg(
          256,
          'What to look for, in any of the directory\'s languages, e.g. "bakery" or "dentist in Hamburg": a place ' +
            'named in it is searched around (see interpreted in the result) unless near or city is given or ' +
            'interpret is false, and a misspelt word is searched as the nearest word the directory knows.',
        ),
        interpret: {
          type: 'boolean',
          description:
            'Whether a place named in query is read as where to search and typos are corrected; true when omitted. ' +
            'False searches the words as typed (e.g. a company called "Paris Bar").',
        },
        near: textArg(256, 'A place, address or "lat,lon" to search around, e.g. "Marienplatz, Munich".'),
        radius_km: {
          type: 'number',
          minimum: 0.1,
          maximum: 500,
          description: 'The radius around near, in km; 25 when omitted.',
        },
        city: textArg(
          100,
          'Only in this municipality, by any of its names (Munich, München and Monaco di Baviera are one ' +
            'city), its districts included; or only in this district (e.g. Tegel). Used when near is not given; ' +
            'an unknown name is an error that suggests the nearest names.',
        ),
        country: COUNTRY_ARG,
        open_now: { type: 'boolean', description: 'Only places open now.' },
        min_rating: {
          type: 'number',
          minimum: 1,
          maximum: 5,
          description: 'Only places rated at least this.',
        },
        limit: limitArg('results'),
      },
      ['query'],
    ),
    async run(args, caller, directoryUrl) {
      const country = args.country as CountryCode | undefined;
      const near =
        typeof args.near === 'string'
          ? await resolveNear(args.near, country, directoryUrl, caller)
          : undefined;
      const query = {
        q: args.query as string,
        limit: (args.limit as number | undefined) ?? 5,
        ...(typeof args.interpret === 'boolean' ? { interpret: args.interpret } : {}),
        ...(near
          ? { near: `${near.lat},${near.lon}`, radius_km: (args.radius_km as number | undefined) ?? 25 }
          : {}),
        ...(!near && typeof args.city === 'string' ? { city: args.city } : {}),
        ...(country ? { country } : {}),
        ...(typeof args.open_now === 'boolean' ? { open_now: args.open_now } : {}),
        ...(typeof args.min_rating === 'number' ? { min_rating: args.min_rating } : {}),
      };
      const page = await directory(
        searchListings({ client: clientFor(directoryUrl, caller), query }),
        `search '${query.q}'`,
      );
      return {
        query: query.q,
        interpreted: page.interpreted ?? null,
        near: near ?? null,
        city: query.city ?? null,
        open_now: query.open_now ?? null,
        results: page.data.map(compactHit),
      };
    },
  },
  {
    name: 'get_place_details',
    title: 'Place details',
    description:
      'Details of one listing by its id (from search_directory): address, opening hours, contact, rating. ' +
      'Billed as a places details call on your key (scope places).',
    inputSchema: argsSchema(
      {
        id: {
          type: 'string',
          pattern: '^lst_[0-9A-Z]{26}$',
          description: 'The listing id, e.g. from search_directory.',
        },
      },
      ['id'],
    ),
    async run(args, caller, directoryUrl) {
      const details = await directory(
        getPlaceDetails({ client: clientFor(directoryUrl, caller), query: { id: args.id as string } }),
        `the details of ${String(args.id)}`,
      );
      return details as unknown as Record<string, unknown>;
    },
  },
  {
    name: 'geocode',
    title: 'Geocode',
    description:
      'Coordinates of a place, address or company name, best candidates first. Billed as a geocode call on your key (scope places).',
    inputSchema: argsSchema(
      {
        query: textArg(256, 'The place, address or company.'),
        country: COUNTRY_ARG,
        limit: limitArg('candidates'),
      },
      ['query'],
    ),
    async run(args, caller, directoryUrl) {
      const page = await directory(
        geocodePlace({
          client: clientFor(directoryUrl, caller),
          query: {
            q: args.query as string,
            limit: (args.limit as number | undefined) ?? 5,
            ...(typeof args.country === 'string' ? { country: args.country as CountryCode } : {}),
          },
        }),
        `geocode '${String(args.query)}'`,
      );
      return { results: page.data };
    },
  },
  {
    name: 'reverse_geocode',
    title: 'Reverse geocode',
    description:
      'The place at a latitude and longitude, and the listings nearest to it. Billed as a reverse geocode call on your key (scope places).',
    inputSchema: argsSchema(
      {
        lat: { type: 'number', minimum: -90, maximum: 90, description: 'Latitude in decimal degrees.' },
        lon: { type: 'number', minimum: -180, maximum: 180, description: 'Longitude in decimal degrees.' },
        limit: limitArg('nearby listings'),
      },
      ['lat', 'lon'],
    ),
    async run(args, caller, directoryUrl) {
      const result = await directory(
        reverseGeocodePlace({
          client: clientFor(directoryUrl, caller),
          query: {
            lat: args.lat as number,
            lon: args.lon as number,
            limit: (args.limit as number | undefined) ?? 5,
          },
        }),
        `reverse geocode ${String(args.lat)},${String(args.lon)}`,
      );
      return result as unknown as Record<string, unknown>;
    },
  },
];

const ajv = new Ajv({ allErrors: false, strict: false });
const validators = new Map<string, ValidateFunction>(
  HUB_TOOLS.map((t) => [t.name, ajv.compile(t.inputSchema)]),
);

/** Runs a hub tool after checking its arguments against its schema (a HubToolError naming the field otherwise). */
export async function runHubTool(
  tool: HubTool,
  args: Record<string, unknown>,
  caller: HubCaller,
  directoryUrl: string,
): Promise<Record<string, unknown>> {
  const validate = validators.get(tool.name);
  if (validate !== undefined && !validate(args)) {
    const error = validate.errors?.[0];
    const where = error?.instancePath ? `'${error.instancePath.slice(1)}'` : 'the arguments';
    throw new HubToolError(`Invalid arguments for ${tool.name}: ${where} ${error?.message ?? 'is invalid'}.`);
  }
  return tool.run(args, caller, directoryUrl);
}
