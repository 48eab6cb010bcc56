-- Stored responses of /v1/responses (issue 17). `input_items` is the response's own input with
-- ids; `context` is every item before its output (the chain of previous_response_id included),
-- so a continuation reads one row. Secrets of mcp tools (headers, authorization) are never stored.
create table if not exists responses (
  id text primary key,
  account_id text not null,
  project_id text not null,
  key_id text not null,
  model text not null,
  status text not null,
  background boolean not null default false,
  created bigint not null,
  updated bigint not null,
  body jsonb not null,
  input_items jsonb not null,
  context jsonb not null
);
create index if not exists responses_project_created on responses (project_id, created);
