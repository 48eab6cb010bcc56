-- The upstream model's first answer to the brief (its text as given, unchecked, and its response
-- id), kept as soon as it is made: a planning stage run again (a retry, a worker killed) checks
-- the same answer instead of asking the model again, which may read the brief another way.
alter table concierge_workflows add column brief_reading jsonb;
