-- Keyword search reads `tsv` of every match to rank it. A listing's row is over 2 kB, so
-- PostgreSQL moved its largest values out of line (TOAST), `tsv` among them: each match cost a
-- TOAST index lookup and chunk reads besides its heap page (at a million listings, 168,000
-- buffers and 690 ms for the 19,000 matches of "Klempner"). `tsv` now stays in the row
-- (compressed); `profile` still goes out of line, and is read for the page served only. The
-- update rewrites the rows stored before, so they follow the new rule too.
alter table listings alter column tsv set storage main;
update listings set tsv = tsv || ''::tsvector;
