-- The suppression list of an account (src/sales/suppressions.ts): addresses no campaign of the
-- account writes to again. One entry per address, in lower case; the first reason stays.
create table suppressions (
  id text primary key,
  account_id text not null,
  email text not null,
  reason text not null check (reason in ('unsubscribed', 'hard_bounce', 'manual')),
  campaign_id text,
  created bigint not null,
  unique (account_id, email)
);
create index suppressions_page on suppressions (account_id, created desc, id desc);
