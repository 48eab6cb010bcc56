// The readings of `q` a search tries (DESIGN, fourth round: never worse): what it understood of
// it (the text searched, the place read out of it, the typos), the readings that let go of a
// little more at each step when a page would be empty, where each searches, and how it is told
// back to the client in `interpreted`.
import type {
  CountryCode,
  SearchCorrection,
  SearchInterpretation,
} from '../../../generated/directory/client/types.gen.ts';
import { conceptsOf } from '../../embeddings/index.ts';
import { BadRequestError } from '../../platform/errors.ts';
import { withoutFunctionWords } from '../../understanding/function-words.ts';
import { municipalityOf } from '../data/gazetteer.ts';
import type { SearchParams } from './shapes.ts';
import { radiusFor, type PlaceInQuery } from './understand.ts';

/** What a search understood of `q`: the text searched, the place read out of it, the typos. */
export interface Understood {
  /** what the keyword side searches */
  q: string | undefined;
  /** what the semantic side embeds: corrections that mean something only */
  meaning: string | undefined;
  place: PlaceInQuery | undefined;
  corrections: SearchCorrection[];
  /** `q` without the place's words, before the typos were corrected */
  uncorrected: string;
}

/** `text` without the function words of any EU language, a trade's words kept ("I'm looking for a plumber" -> "plumber"). */
export const contentWords = (text: string): string =>
  withoutFunctionWords(text, (word) => conceptsOf(word).size > 0);

type Relaxed = SearchInterpretation['relaxed'][number];

/** A reading of `q` to try, and what was let go of to get to it. */
export interface Relaxation {
  understood: Understood | undefined;
  relaxed: Relaxed[];
}

/** The widest radius a place's name is searched within, relaxed (DESIGN: 25 km). */
const WIDEST_RADIUS_KM = 25;

/**
 * The readings of `q` a search tries in turn, each letting go of a little more (DESIGN, fourth
 * round): the reading itself; without the function words; a district as its whole municipality;
 * the place within 25 km; no place (the other words anywhere); the typos as typed; the place's
 * words as words.
 */
export function* relaxations(u: Understood | undefined, typed: string | undefined): Generator<Relaxation> {
  yield { understood: u, relaxed: [] };
  if (!u || typed === undefined) return;
  // made only as far as a search needs them: the first reading alone, unless its page is empty
  let current = u;
  const relaxed: Relaxed[] = [];
  const take = (next: Understood, step: Relaxed): Relaxation => {
    current = next;
    relaxed.push(step);
    return { understood: next, relaxed: [...relaxed] };
  };
  // the words a sentence is built with ("I'm looking for a good ...") first: they name nothing
  // a listing is, and a keyword search that asks for every word finds nothing with them
  const content = current.q !== undefined ? contentWords(current.q) : undefined;
  if (content !== undefined && content !== current.q)
    yield take(
      { ...current, q: content, uncorrected: contentWords(current.uncorrected) },
      'function_words_dropped',
    );
  const place = u.place;
  if (place?.kind === 'district') {
    const town = municipalityOf(place.place);
    if (town !== place.place) {
      const city = { ...place, place: town, kind: 'municipality' as const, radiusKm: radiusFor(town) };
      yield take({ ...current, place: city }, 'district_to_city');
    }
  }
  if (current.place && current.place.radiusKm < WIDEST_RADIUS_KM)
    yield take({ ...current, place: { ...current.place, radiusKm: WIDEST_RADIUS_KM } }, 'radius_widened');
  if (current.place && current.q !== undefined) yield take({ ...current, place: undefined }, 'place_dropped');
  if (current.corrections.length > 0) {
    const words = current.uncorrected || undefined;
    yield take({ ...current, q: words, meaning: words, corrections: [] }, 'corrections_dropped');
  }
  // what is searched when no reading is kept: the words, without those a sentence is built with
  const words = contentWords(typed);
  if (u.place && (current.place || current.q !== words)) {
    yield take(
      { q: words, meaning: typed, place: undefined, corrections: [], uncorrected: words },
      'place_reading_dropped',
    );
  }
}

/** Where a reading searches: the text, and the circle of its place (or of `near`). */
export function located(
  params: SearchParams,
  understood: Understood | undefined,
  typed: string | undefined,
): { q: string | undefined; near: { lat: number; lon: number } | undefined; radius: number } {
  const place = understood?.place;
  const near = place
    ? { lat: place.place.lat, lon: place.place.lon }
    : params.near !== undefined
      ? parseNear(params.near)
      : undefined;
  const radius = place ? place.radiusKm : (params.radius_km ?? 10);
  return { q: understood ? understood.q : typed, near, radius };
}

export function interpretation(u: Understood, relaxed: Relaxed[]): SearchInterpretation {
  const p = u.place;
  return {
    q: u.q ?? null,
    place: p
      ? {
          kind: p.kind,
          matched: p.matched,
          geonames_id: p.kind === 'street' ? null : p.place.geonamesId,
          name: p.place.name,
          municipality: p.municipality,
          country: p.place.country as CountryCode,
          region: p.place.region,
          lat: p.place.lat,
          lon: p.place.lon,
          radius_km: p.radiusKm,
        }
      : null,
    corrections: u.corrections,
    relaxed,
  };
}

function parseNear(near: string): { lat: number; lon: number } {
  const [lat, lon] = near.split(',').map((part) => Math.round(Number(part) * 1e7) / 1e7);
  if (lat === undefined || lon === undefined || !Number.isFinite(lat) || !Number.isFinite(lon)) {
    throw new BadRequestError('invalid_near', 'near must be "lat,lon" in decimal degrees.', {
      param: 'near',
    });
  }
  return { lat, lon };
}
