-- The events of a background response as its run emits them (issue 17): a stream opened while
-- it runs (GET /v1/responses/{id}?stream=true) follows it live, and a client that lost its
-- connection resumes after the last sequence number it saw (`starting_after`). A run that an
-- instance lost runs again from its start, and its events are written again from 0.
create table if not exists response_events (
  response_id text not null references responses (id) on delete cascade,
  seq integer not null,
  event jsonb not null,
  primary key (response_id, seq)
);
