-- Remote MCP servers registered per project (issue 17). `headers` is AES-256-GCM ciphertext
-- (src/mcp/secrets.ts), never returned; `header_names` is what the API shows of it.
create table if not exists mcp_servers (
  id text primary key,
  account_id text not null,
  project_id text not null,
  label text not null,
  url text not null,
  headers text,
  header_names jsonb not null default '[]'::jsonb,
  allowed_tools jsonb,
  created bigint not null,
  unique (project_id, label)
);
create index if not exists mcp_servers_project_created on mcp_servers (project_id, created, id);
