-- Opt-outs of erased accounts as keyed hashes (src/sales/opt-out-hashes.ts): HMAC-SHA256 under a
-- key derived from the secrets key, of the address's SHA-256. The rows 0711 kept are that SHA-256
-- (`sha256`); they keep matching, and the first start with a secrets key re-hashes them, which
-- needs no address. key_id names the key a keyed row was made with, so a changed key is told.
alter table suppression_hashes rename column email_sha256 to email_hash;
alter table suppression_hashes add column hash_form text not null default 'sha256'
  check (hash_form in ('sha256', 'hmac-sha256'));
alter table suppression_hashes alter column hash_form drop default;
alter table suppression_hashes add column key_id text;
