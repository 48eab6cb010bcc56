-- Subscriptions of accounts to monthly plans (console, issue 20). At most one active
-- subscription per account and plan. accounts.plan says what the API enforces
-- ('search_unlimited' while that subscription is active, else 'standard').
create table subscriptions (
  id text primary key,
  account_id text not null references accounts (id),
  plan text not null,
  status text not null check (status in ('active', 'canceled')),
  started_at bigint not null,
  canceled_at bigint,
  created bigint not null
);
create unique index subscriptions_one_active on subscriptions (account_id, plan) where status = 'active';
create index subscriptions_account_page on subscriptions (account_id, created desc, id desc);
