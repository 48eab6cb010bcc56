-- Sending domains of a project (src/mail/domains.ts): the DKIM key pair made when the domain is
-- added (the private half sealed with the secrets box, the row's id as associated data), the
-- records to publish with the result of the last lookup, and the domain's status.
create table sending_domains (
  id text primary key,
  account_id text not null,
  project_id text not null,
  domain text not null,
  from_name text,
  dkim_selector text not null,
  dkim_private_key_sealed text not null,
  -- [{type, name, value, purpose, status, found}] in the order they are shown
  dns_records jsonb not null,
  status text not null default 'pending',
  verified_at bigint,
  last_checked_at bigint,
  created bigint not null,
  unique (project_id, domain)
);
create index sending_domains_project_page on sending_domains (project_id, created desc, id desc);
-- the inbound listener asks, per RCPT TO, which verified domains `reply.<domain>` belongs to
create index sending_domains_domain on sending_domains (domain) where verified_at is not null;
