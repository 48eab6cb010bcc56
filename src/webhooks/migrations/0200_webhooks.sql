-- Webhook endpoints of a project, and the messages sent to them with their attempts
-- (src/webhooks). A message keeps the exact body it is sent with, so every attempt and every
-- re-send carries the same bytes and the same webhook-id.
create table webhook_endpoints (
  id text primary key,
  project_id text not null,
  url text not null,
  description text,
  event_types jsonb not null,
  enabled boolean not null default true,
  disabled_reason text,
  failing boolean not null default false,
  -- the first failed attempt since the last delivery; 5 days on, the endpoint is disabled
  failing_since timestamptz,
  secret_sealed text not null,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  metadata jsonb not null default '{}',
  created bigint not null
);
create index webhook_endpoints_project on webhook_endpoints (project_id, created desc, id desc);

create table webhook_messages (
  id text primary key,
  endpoint_id text not null references webhook_endpoints (id) on delete cascade,
  project_id text not null,
  event_type text not null,
  body text not null,
  status text not null default 'pending',
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  attempt_log jsonb not null default '[]',
  created bigint not null
);
create index webhook_messages_endpoint on webhook_messages (endpoint_id, created desc, id desc);
create index webhook_messages_created on webhook_messages (created);
