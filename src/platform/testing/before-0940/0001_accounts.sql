-- Accounts own projects, projects own API keys. A key carries scopes of either service.
create table accounts (
  id text primary key,
  name text not null,
  plan text not null default 'standard',
  created bigint not null
);

create table projects (
  id text primary key,
  account_id text not null references accounts (id),
  name text not null,
  metadata jsonb not null default '{}'::jsonb,
  is_default boolean not null default false,
  created bigint not null
);
create index projects_account_page on projects (account_id, created desc, id desc);

-- Secrets are never stored: only their SHA-256. A rotated key keeps its previous hash until
-- previous_secret_expires_at, so both secrets work during the grace period.
create table api_keys (
  id text primary key,
  account_id text not null references accounts (id),
  project_id text not null references projects (id),
  name text not null,
  scopes text[] not null,
  secret_hash text not null unique,
  preview text not null,
  previous_secret_hash text unique,
  previous_secret_expires_at bigint,
  status text not null default 'active',
  created bigint not null,
  last_used_at bigint,
  expires_at bigint,
  revoked_at bigint,
  rotated_at bigint
);
create index api_keys_account_page on api_keys (account_id, created desc, id desc);

-- Every billable call, one row: what it used, what it cost (integer nano-EUR), how it ended.
create table usage_records (
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
  day date not null
);
create index usage_records_account_day on usage_records (account_id, service, day);

-- Idempotency-Key: the first response is replayed for 24 h; another body with the same key is a 409.
create table idempotency_keys (
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
