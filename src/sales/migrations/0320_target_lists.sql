-- Target lists (src/sales/target-lists.ts): filled from a search by a durable job, then edited
-- by hand. A member keeps a snapshot of its listing; `position` is the search's rank (members
-- added by hand come after), the order members are listed in.
create table target_lists (
  id text primary key,
  account_id text not null,
  project_id text not null,
  name text not null,
  filters jsonb not null,
  max_members integer not null,
  status text not null default 'building' check (status in ('building', 'ready', 'failed')),
  matched integer not null default 0,
  added integer not null default 0,
  skipped_no_email integer not null default 0,
  member_count integer not null default 0,
  failure_reason text,
  metadata jsonb not null default '{}',
  created bigint not null,
  built_at bigint
);
create index target_lists_project on target_lists (project_id, created desc, id desc);

create table target_list_members (
  id text primary key,
  target_list_id text not null references target_lists (id) on delete cascade,
  listing_id text not null,
  position integer not null,
  email text not null,
  listing jsonb not null,
  status text not null default 'pending'
    check (status in ('pending', 'contacted', 'replied', 'bounced', 'unsubscribed')),
  added bigint not null,
  updated bigint not null,
  unique (target_list_id, listing_id)
);
create index target_list_members_order on target_list_members (target_list_id, position, id);
