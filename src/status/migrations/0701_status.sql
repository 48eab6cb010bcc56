-- The public status page: one row per component per 30-second slot. Whichever instance probes
-- a slot first writes it (primary key), so any number of instances or workers keep one history.
create table status_probes (
  component text not null,
  slot bigint not null,
  ok boolean not null,
  latency_ms integer not null,
  detail text,
  primary key (component, slot)
);

-- Incidents shown on the status page (written by the operator; none are made up).
create table status_incidents (
  id text primary key,
  title text not null,
  body text not null,
  impact text not null check (impact in ('minor', 'major', 'critical')),
  components text[] not null,
  created bigint not null,
  resolved_at bigint
);
