-- Exports and erasures of an account's data (issue 29, src/privacy/). An export's archive is
-- the JSON the job built, served by a signed, expiring link and dropped when the link expires.
-- An erasure waits out its grace period (cancellable), then runs as a job; its receipt (what was
-- erased, what was kept and why) is kept without personal data, as proof it was done.
create table account_exports (
  id text primary key,
  account_id text not null,
  status text not null check (status in ('pending', 'completed', 'failed')),
  archive text,
  size_bytes bigint,
  created bigint not null,
  completed_at bigint,
  expires_at bigint
);
create index account_exports_account on account_exports (account_id, created desc);

create table account_erasures (
  id text primary key,
  account_id text not null,
  status text not null check (status in ('scheduled', 'cancelled', 'completed')),
  erase_at bigint not null,
  job_id text,
  receipt jsonb,
  created bigint not null,
  cancelled_at bigint,
  completed_at bigint
);
create unique index account_erasures_one_scheduled on account_erasures (account_id) where status = 'scheduled';

-- The key that signs archive links: made once per database, shared by every instance.
create table privacy_settings (
  name text primary key,
  value text not null
);
