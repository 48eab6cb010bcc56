-- CRM connections and their syncs (src/crm). A connection's credentials are sealed with the
-- secrets box (the connection id as associated data) and never leave the server. `settings`
-- holds what the check call learned (Pipedrive's field key). A sync pushes a target list's
-- members, then replies; its records are written a batch at a time, in the transaction that
-- moves its counts, so what is recorded is exactly what the CRM confirmed.
create table crm_connections (
  id text primary key,
  account_id text not null,
  project_id text not null,
  provider text not null check (provider in ('hubspot', 'salesforce', 'pipedrive')),
  status text not null default 'active' check (status in ('active', 'error', 'disconnected')),
  sync_replies boolean not null,
  base_url text,
  credentials_sealed text not null,
  settings jsonb not null default '{}',
  last_synced_at bigint,
  last_sync_id text,
  last_error text,
  metadata jsonb not null default '{}',
  created bigint not null
);
create index crm_connections_project on crm_connections (project_id, created desc, id desc);

create table crm_syncs (
  id text primary key,
  connection_id text not null references crm_connections (id) on delete cascade,
  project_id text not null,
  target_list_id text not null,
  trigger text not null check (trigger in ('manual', 'reply')),
  -- a sync started by a reply pushes that reply's member (and its replies) only
  listing_id text,
  include_replies boolean not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  total integer not null default 0,
  created_count integer not null default 0,
  updated_count integer not null default 0,
  failed_count integer not null default 0,
  -- the position of the last member whose batch is recorded: an attempt that starts again
  -- resumes after it
  member_cursor integer not null default -1,
  error_code text,
  error_message text,
  queued_at bigint not null,
  started_at bigint,
  completed_at bigint,
  created bigint not null
);
create index crm_syncs_connection on crm_syncs (connection_id, created desc, id desc);
create index crm_syncs_open on crm_syncs (connection_id, target_list_id) where status in ('queued', 'running');

create table crm_sync_records (
  id text primary key,
  sync_id text not null references crm_syncs (id) on delete cascade,
  seq integer not null,
  kind text not null check (kind in ('member', 'reply')),
  listing_id text not null,
  reply_id text,
  result text not null check (result in ('created', 'updated', 'failed')),
  crm_object text not null,
  crm_id text,
  contact jsonb,
  error text,
  created bigint not null,
  unique (sync_id, seq)
);
create index crm_sync_records_result on crm_sync_records (sync_id, result, seq);

-- What is in a connection's CRM: a member's company and contact ids (what notes attach to),
-- and the replies already added as notes (never added twice).
create table crm_links (
  connection_id text not null references crm_connections (id) on delete cascade,
  kind text not null check (kind in ('company', 'contact', 'note')),
  local_id text not null,
  crm_id text not null,
  updated bigint not null,
  primary key (connection_id, kind, local_id)
);
