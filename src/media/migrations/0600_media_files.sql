-- Images made with response_format url (issue 19), kept for the hour their signed URL is valid,
-- then deleted by the sweep that runs with each new image. The signing key of those URLs is made
-- once per database, so every instance signs and verifies alike.
create table if not exists media_files (
  id text primary key,
  account_id text not null,
  project_id text not null,
  content_type text not null,
  bytes bytea not null,
  created bigint not null,
  expires bigint not null
);
create index if not exists media_files_expires on media_files (expires);
create table if not exists media_signing_keys (
  id integer primary key,
  secret text not null
);
