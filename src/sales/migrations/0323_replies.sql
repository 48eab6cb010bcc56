-- Answers to campaign messages (src/sales/replies.ts), matched to the message they answer. A
-- message is billed at most once: the partial unique index admits one billed answer per
-- (recipient, step), and the usage record is written in the same transaction as that answer.
create table replies (
  id text primary key,
  account_id text not null,
  project_id text not null,
  campaign_id text not null,
  recipient_id text not null,
  member_id text not null,
  listing_id text not null,
  target_list_id text not null,
  step integer not null,
  in_reply_to text not null,
  matched_by text not null check (matched_by in ('token', 'in_reply_to', 'references')),
  kind text not null check (kind in ('human', 'auto_reply', 'bounce')),
  from_address text not null,
  from_name text,
  subject text not null,
  text text not null,
  -- the answer's own Message-ID (or a digest of it when it has none): a message the sender
  -- retries (our 250 lost) is stored once
  inbound_id text not null,
  received_at bigint not null,
  billed boolean not null default false,
  cost_nano bigint not null default 0,
  crm_synced boolean not null default false,
  created bigint not null,
  unique (recipient_id, inbound_id)
);
create unique index replies_billed_once on replies (recipient_id, step) where billed;
create index replies_project on replies (project_id, created desc, id desc);
create index replies_campaign on replies (campaign_id, created desc, id desc);
