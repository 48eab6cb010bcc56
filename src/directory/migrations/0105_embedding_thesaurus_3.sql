-- The thesaurus gave motorcycles (45.40) and car parts (45.32) concepts of their own, apart from
-- car repair (45.20): embedding engine `thesaurus-3`. An empty directory starts at it; a filled
-- one keeps its version and is re-embedded at the next start (src/directory/reembed.ts).
update directory_meta set value = 'thesaurus-3'
where key = 'embedding_version' and not exists (select 1 from listings);
