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
