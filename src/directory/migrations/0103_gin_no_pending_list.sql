-- GIN indexes keep new entries in a "pending list" (fastupdate) that every search scans in full
-- until VACUUM merges it. PGlite has no autovacuum, and a directory loaded at start-up left
-- 2-4 MB pending on each index: a photo lookup took 2-10 ms instead of 0.4, and every keyword
-- search paid the same scan. Entries now go straight into the index (inserts cost a little
-- more; searches are what this table is for), and what is pending now is merged.
alter index listings_tsv set (fastupdate = off);
alter index listings_activity set (fastupdate = off);
alter index listings_photos set (fastupdate = off);
alter index listings_address_tsv set (fastupdate = off);
select gin_clean_pending_list('listings_tsv'::regclass);
select gin_clean_pending_list('listings_activity'::regclass);
select gin_clean_pending_list('listings_photos'::regclass);
select gin_clean_pending_list('listings_address_tsv'::regclass);
-- and statistics: PGlite has no autovacuum, so a directory filled before this was never analysed
analyze listings;
