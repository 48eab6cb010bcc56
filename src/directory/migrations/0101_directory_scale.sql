-- Directory at a million listings. Geocoding matched addresses with `like '%q%'`, a scan of
-- every row; now listing names match by prefix on a C-collation b-tree and addresses by word
-- prefixes on a GIN index (`hauptstr 12` finds `Hauptstraße 12, 10115 Berlin`), both core
-- PostgreSQL, so PGlite and PostgreSQL run the same SQL.
create index listings_name_prefix on listings (name_folded collate "C");
alter table listings add column address_tsv tsvector generated always as (to_tsvector('simple', address_folded)) stored;
create index listings_address_tsv on listings using gin (address_tsv);
