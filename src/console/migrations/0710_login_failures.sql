-- Failed log-ins per (account address, client address) (issue 29, finding 5): each failure past
-- the first few blocks that pair for a delay that doubles, so a guesser elsewhere slows only
-- itself and never locks the owner out from their own address. `pair_hash` is the sha256 of the
-- normalized email and the client address; a success deletes the row.
create table console_login_failures (
  pair_hash text primary key,
  failures integer not null,
  last_failure_at bigint not null,
  blocked_until bigint not null
);
create index console_login_failures_last on console_login_failures (last_failure_at);
