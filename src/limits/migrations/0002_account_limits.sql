-- Custom limits of an account (an enterprise contract), set by the operator with
-- PUT /v1/accounts/{account_id}/limits. A null figure is the plan's; `directory_daily_quota_set`
-- tells a daily quota of none (set, null) from the plan's (not set). A row whose figures are all
-- unset keeps when the custom limits were last removed.
create table account_limits (
  account_id text primary key references accounts (id) on delete cascade,
  model_rpm integer,
  model_tpm bigint,
  images_per_minute integer,
  audio_seconds_per_minute integer,
  directory_rps double precision,
  directory_burst integer,
  directory_burst_seconds integer,
  directory_daily_quota bigint,
  directory_daily_quota_set boolean not null default false,
  updated bigint not null
);
