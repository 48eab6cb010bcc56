-- Retention of request logs and usage detail (issue 29): past RETENTION_REQUEST_LOGS a call's
-- usage record (endpoint, status, latency, stream flags, exact time) is rolled into one row per
-- day, key and model; past RETENTION_USAGE_DETAIL those lose their key and project. `requests`
-- counts the calls a row stands for, so reports and statements sum it and stay exact.
alter table usage_records add column requests bigint not null default 1;
