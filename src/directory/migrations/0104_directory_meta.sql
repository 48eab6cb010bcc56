-- What version of derived data the directory holds. `embedding_version` names the embedding
-- engine that computed `listings.embedding`; at start-up the directory re-embeds every listing
-- when the code's engine differs (src/directory/reembed.ts). Listings stored before this
-- migration were embedded by the first engine (`thesaurus-1`); an empty directory starts at the
-- engine of this release.
create table directory_meta (
  key text primary key,
  value text not null
);
insert into directory_meta (key, value)
select 'embedding_version', case when exists (select 1 from listings) then 'thesaurus-1' else 'thesaurus-2' end;
