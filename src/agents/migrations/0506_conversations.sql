-- Conversations of the Responses API (issue 30), per project: items kept in order (`seq`, one
-- sequence for all, so two appends at once never collide) across responses. An item's id is
-- unique within its conversation; `account_id` lets an `item_reference` find it.
create table if not exists conversations (
  id text primary key,
  account_id text not null,
  project_id text not null,
  created bigint not null,
  metadata jsonb not null default '{}'::jsonb
);
create index if not exists conversations_project on conversations (project_id, created);
create table if not exists conversation_items (
  seq bigserial primary key,
  conversation_id text not null references conversations (id) on delete cascade,
  id text not null,
  account_id text not null,
  created bigint not null,
  item jsonb not null,
  unique (conversation_id, id)
);
create index if not exists conversation_items_account_id on conversation_items (account_id, id);
