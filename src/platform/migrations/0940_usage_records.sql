-- The platform's own tables, made by the accounts migration (0001) until accounts/ took its
-- tables into its own folder: a database that ran 0001 has them already, so each is made only if
-- missing, and one made before 0011 (now folded in here) gets its requests column.

-- Every billable call, one row: what it used, what it cost (integer nano-EUR), how it ended.
create table if not exists usage_records (
  id text primary key,
  service text not null,
  account_id text not null,
  project_id text not null,
  key_id text not null,
  model text,
  endpoint text not null,
  input_tokens bigint not null default 0,
  output_tokens bigint not null default 0,
  audio_seconds double precision not null default 0,
  images bigint not null default 0,
  steps bigint not null default 0,
  units bigint not null default 0,
  cost_nano bigint not null default 0,
  status integer not null,
  latency_ms integer not null,
  streamed boolean not null default false,
  disconnected boolean not null default false,
  created bigint not null,
  day date not null,
  -- the calls the row stands for: one, or more once the retention rolled rows into one (last, as
  -- 0011 added it)
  requests bigint not null default 1
);
create index if not exists usage_records_account_day on usage_records (account_id, service, day);

-- Idempotency-Key: the first response is replayed for 24 h; another body with the same key is a 409.
create table if not exists idempotency_keys (
  account_id text not null,
  key text not null,
  method text not null,
  path text not null,
  request_hash text not null,
  status integer,
  headers jsonb,
  body text,
  created bigint not null,
  primary key (account_id, key)
);

-- Retention of request logs and usage detail (issue 29): past RETENTION_REQUEST_LOGS a call's
-- usage record is rolled into one row per day, key and model (platform/usage-records.ts rollUpUsage).
alter table usage_records add column if not exists requests bigint not null default 1;
