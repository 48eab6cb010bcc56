-- The directory's listings. `profile` holds the Listing as the API shows it, minus what is
-- computed per request (open_now, next_open, next_close, photo URLs); the other columns are
-- what search filters and ranks on. Text columns are accent- and case-folded by the writer
-- (src/embeddings/fold.ts), so one SQL serves PGlite and PostgreSQL without extensions.
create table listings (
  seq bigint generated always as identity unique,
  id text primary key,
  profile jsonb not null,
  name_folded text not null,
  address_folded text not null,
  city_folded text not null,
  country text not null,
  lat double precision not null,
  lon double precision not null,
  activity_path text[] not null,
  claimed boolean not null,
  rating double precision,
  review_count integer not null,
  response_time integer,
  time_zone text,
  week_open int4multirange,
  special_cover tstzmultirange,
  special_open tstzmultirange,
  photo_ids text[] not null default '{}',
  tsv tsvector not null,
  embedding bytea not null,
  created bigint not null,
  updated bigint not null
);
create index listings_tsv on listings using gin (tsv);
create index listings_activity on listings using gin (activity_path);
create index listings_photos on listings using gin (photo_ids);
create index listings_country_city on listings (country, city_folded);
create index listings_lat on listings (lat, lon);
