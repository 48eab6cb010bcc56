-- Campaigns (src/sales/campaigns.ts, sender.ts): a draft until launched; at launch the target
-- list's members become its recipients. Each step of each recipient is one campaign_messages
-- row, unique per (recipient, step): the row is claimed ('sending') before the message is handed
-- to the relay and recorded ('sent') after, so no step goes to a recipient twice.
create table campaigns (
  id text primary key,
  account_id text not null,
  project_id text not null,
  -- the key that created the campaign: its replies are billed to it
  key_id text not null,
  name text not null,
  target_list_id text not null,
  sending_domain_id text not null,
  from_email text not null,
  from_name text not null,
  -- step 0 (subject, body_text, body_html) and the follow-ups (with delay_days), in order
  steps jsonb not null,
  send_window jsonb,
  hourly_cap integer not null,
  status text not null default 'draft'
    check (status in ('draft', 'scheduled', 'sending', 'paused', 'completed', 'cancelled')),
  paused_reason text,
  schedule_at bigint,
  metadata jsonb not null default '{}',
  created bigint not null,
  launched_at bigint,
  completed_at bigint,
  -- the live chain of scheduling jobs: a job of another generation is stale and does nothing
  tick_gen integer not null default 0,
  next_tick_at timestamptz,
  recipients integer not null default 0,
  suppressed integer not null default 0,
  contacted integer not null default 0,
  messages_sent integer not null default 0,
  messages_failed integer not null default 0,
  replied integer not null default 0,
  bounced integer not null default 0,
  unsubscribed integer not null default 0
);
create index campaigns_project on campaigns (project_id, created desc, id desc);
create index campaigns_target_list on campaigns (target_list_id);
create index campaigns_domain on campaigns (sending_domain_id);
create index campaigns_live on campaigns (status, next_tick_at) where status in ('scheduled', 'sending');

create table campaign_recipients (
  id text primary key,
  campaign_id text not null references campaigns (id) on delete cascade,
  account_id text not null,
  project_id text not null,
  target_list_id text not null,
  member_id text not null,
  listing_id text not null,
  position integer not null,
  email text not null,
  name text not null,
  -- the merge values of the member's listing at launch
  merge jsonb not null,
  -- `r-<token>@reply.<domain>`: lower-case base32, random
  reply_token text not null unique,
  status text not null default 'pending'
    check (status in ('pending', 'contacted', 'replied', 'bounced', 'unsubscribed', 'suppressed', 'failed')),
  next_step integer not null default 0,
  -- when the next step is due; null while one is queued or when none will come
  next_at timestamptz,
  created bigint not null,
  updated bigint not null
);
create index campaign_recipients_order on campaign_recipients (campaign_id, position, id);
create index campaign_recipients_due on campaign_recipients (campaign_id, next_at) where next_at is not null;

create table campaign_messages (
  id text primary key,
  campaign_id text not null references campaigns (id) on delete cascade,
  recipient_id text not null references campaign_recipients (id) on delete cascade,
  sending_domain_id text not null,
  step integer not null,
  message_id text not null unique,
  status text not null default 'queued' check (status in ('queued', 'sending', 'sent', 'failed', 'interrupted')),
  attempts integer not null default 0,
  via text,
  error text,
  queued_at timestamptz not null default now(),
  -- when an attempt claimed it: a claim older than any attempt can live was left by a dead one
  claimed_at timestamptz,
  sent_at bigint,
  unique (recipient_id, step)
);
create index campaign_messages_domain_hour on campaign_messages (sending_domain_id, queued_at);
create index campaign_messages_campaign on campaign_messages (campaign_id, status);
