-- Console users (people who sign in to /console), their sessions, and the single-use tokens
-- of verification and password-reset links. Secrets are never stored: a session or a link
-- token is kept as its SHA-256 only; a password as a salted scrypt hash with its parameters.
create table console_users (
  id text primary key,
  account_id text not null references accounts (id),
  email text not null unique,
  password_hash text not null,
  email_verified_at bigint,
  created bigint not null
);

create table console_sessions (
  token_hash text primary key,
  user_id text not null references console_users (id) on delete cascade,
  account_id text not null references accounts (id),
  created bigint not null,
  expires_at bigint not null
);
create index console_sessions_user on console_sessions (user_id);

create table console_tokens (
  token_hash text primary key,
  user_id text not null references console_users (id) on delete cascade,
  purpose text not null check (purpose in ('verify_email', 'reset_password')),
  created bigint not null,
  expires_at bigint not null,
  used_at bigint
);

-- A random name for this installation's console throttles: instances sharing the database share
-- the throttles in Redis; another database on the same Redis (a test run) counts apart.
create table console_settings (
  name text primary key,
  value text not null
);
insert into console_settings (name, value) values ('throttle_namespace', md5(random()::text || clock_timestamp()::text));
