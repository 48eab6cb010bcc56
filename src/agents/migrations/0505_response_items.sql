-- Every item of a stored response, input and output, by id (issue 30): an `item_reference` in a
-- later request names one of them, and resolves within the account that stored it. An item sent
-- back as input keeps its id, so one id may belong to several responses; the latest is read.
create table if not exists response_items (
  response_id text not null references responses (id) on delete cascade,
  id text not null,
  account_id text not null,
  created bigint not null,
  item jsonb not null,
  primary key (response_id, id)
);
create index if not exists response_items_account_id on response_items (account_id, id, created);
