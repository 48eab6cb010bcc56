// The shapes the parts of search pass to each other.
import type { SearchListingsData } from '../../../generated/directory/client/types.gen.ts';
import type { ListingRecord } from '../store.ts';

export type SearchParams = NonNullable<SearchListingsData['query']>;

/** What a search sees: every listing up to a sequence number, and their mean rating then. */
export interface Snapshot {
  seq: number;
  mean: number;
}

/** One hit as ranked, before it is rendered. */
export interface Row {
  seq: number;
  id: string;
  profile: ListingRecord;
  kw: number | null;
  sim: number | null;
  bayes: number;
  dist: number | null;
  score: number;
}

/** A hit ranked, before its profile is read. */
export type Ranked = Omit<Row, 'profile'>;

/** The filters of a search, as both paths apply them. */
export interface Filters {
  activity: string | undefined;
  country: string | undefined;
  city: CityFilter | undefined;
  claimed: boolean | undefined;
  minRating: number | undefined;
  near: { lat: number; lon: number; radius: number } | undefined;
}

/** The `city` filter resolved: the folded names a listing's city or district may carry. */
export interface CityFilter {
  cities: string[];
  districts: string[];
  /** the country of the place named, when the gazetteer knows it */
  country?: string;
}
