-- Concierge workflows (src/concierge): one row per brief, its progress log and results as
-- JSON beside it (bounded: at most 20 providers, a few dozen steps), and one row per request
-- for a quote sent to a provider, with the answer and its reading.
create table concierge_workflows (
  id text primary key,
  account_id text not null,
  project_id text not null,
  key_id text not null,
  status text not null default 'queued',
  stage text,
  brief text not null,
  -- the hints as sent: location, near, radius_km, country, activity, max_providers, deadline
  hints jsonb not null,
  contact boolean not null,
  sending_domain_id text,
  from_address text,
  from_name text,
  respond_by bigint,
  complexity text not null,
  price_nano bigint not null,
  webhook_endpoint_id text,
  understanding jsonb,
  -- the candidates the search found, kept for the comparison (listing facts, not shown)
  candidates jsonb not null default '[]',
  shortlist jsonb not null default '[]',
  steps jsonb not null default '[]',
  result jsonb,
  error jsonb,
  metadata jsonb not null default '{}',
  request_id text not null,
  -- the platform's own cost of the agents runtime for this workflow (never billed to the customer)
  agent_steps integer not null default 0,
  agent_cost_nano bigint not null default 0,
  created bigint not null,
  started_at bigint,
  completed_at bigint
);
create index concierge_workflows_project on concierge_workflows (project_id, created desc, id desc);
create index concierge_workflows_status on concierge_workflows (project_id, status, created desc, id desc);

create table concierge_contacts (
  id text primary key,
  workflow_id text not null references concierge_workflows (id) on delete cascade,
  account_id text not null,
  position integer not null,
  listing_id text not null,
  name text not null,
  email text not null,
  status text not null default 'pending',
  -- the Reply-To token: q-<token>@reply.<domain>
  token text not null unique,
  message_id text,
  sent_at bigint,
  failure text,
  -- the first answer: received_at, from, subject, text, message_id; then its reading
  reply jsonb,
  reading jsonb,
  reading_response_id text,
  unique (workflow_id, listing_id)
);
create index concierge_contacts_workflow on concierge_contacts (workflow_id, position);
create index concierge_contacts_message on concierge_contacts (message_id);

-- The platform's own API key the concierge calls the Model API's agents runtime with (one row),
-- its secret sealed with the secrets key: what the runtime spends is the platform's cost.
create table concierge_runtime (
  id text primary key,
  account_id text not null,
  key_id text not null,
  secret_sealed text not null,
  created bigint not null
);
