-- Opt-outs that outlive an erased account (issue 29): when an account is erased, each address
-- on its suppression list is kept as the SHA-256 of its lower-case form, once per sending domain
-- of the account (an opt-out is from a sender), with the reason. Every send from that domain
-- checks it, whatever account sends, so whoever opted out never hears from it again.
create table suppression_hashes (
  domain text not null,
  email_sha256 text not null,
  reason text not null,
  created bigint not null,
  primary key (domain, email_sha256)
);
