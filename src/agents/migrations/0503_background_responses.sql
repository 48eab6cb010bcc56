-- Background responses (issue 17): the request and the caller's bearer key, sealed with the
-- secrets key (mcp tool headers are secrets), and who asked, so a job on any instance can run it.
alter table responses add column if not exists sealed_request text;
alter table responses add column if not exists principal jsonb;
