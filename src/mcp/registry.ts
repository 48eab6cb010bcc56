// Remote MCP servers registered per project (their routes are in servers-routes.ts).
// Header values are sealed at rest and never returned: the API shows their names only.
import type { CreateMcpServerData, McpServer } from '../../generated/model/client/types.gen.ts';
import type { Db } from '../platform/db.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { type Page, pageNewestFirst } from '../platform/pagination.ts';
import type { Principal } from '../platform/principal.ts';
import { HUB_LABEL } from './hub.ts';
import { checkRemoteUrl } from './remote.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { nowSeconds } from '../platform/clock.ts';

/** At most this many servers per project (each is listed on every tools/list of the hub). */
export const MAX_SERVERS = 20;

interface Row {
  id: string;
  project_id: string;
  label: string;
  url: string;
  headers: string | null;
  header_names: string[];
  allowed_tools: string[] | null;
  created: number;
}

/** A registered server with its headers opened, for the hub's calls. */
export interface RegisteredServer {
  id: string;
  label: string;
  url: string;
  headers: Record<string, string>;
  allowedTools: string[] | null;
}

function toServer(row: Row): McpServer {
  return {
    id: row.id,
    object: 'mcp_server',
    project_id: row.project_id,
    label: row.label,
    url: row.url,
    allowed_tools: row.allowed_tools,
    header_names: row.header_names,
    created: row.created,
  };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError('not_found', `No MCP server with id '${id}' is registered in this project.`, {
    param: 'id',
  });
}

export class McpServerStore {
  readonly #db: Db;
  readonly #box: SecretBox | undefined;
  readonly #allowPrivate: boolean;

  constructor(db: Db, box: SecretBox | undefined, allowPrivate: boolean) {
    this.#db = db;
    this.#box = box;
    this.#allowPrivate = allowPrivate;
  }

  async create(principal: Principal, input: CreateMcpServerData['body']): Promise<McpServer> {
    if (input.label === HUB_LABEL) {
      throw new BadRequestError('label_reserved', `The label '${HUB_LABEL}' is the hub's own.`, {
        param: 'label',
      });
    }
    const url = (await checkRemoteUrl(input.url, this.#allowPrivate)).href;
    const headers = input.headers ?? {};
    const names = Object.keys(headers);
    const id = newId('mcps');
    let sealed: string | null = null;
    if (names.length > 0) {
      if (this.#box === undefined) {
        throw new BadRequestError(
          'secrets_unavailable',
          'This deployment has no SECRETS_ENCRYPTION_KEY, so it cannot store headers; register the server without them.',
          { param: 'headers' },
        );
      }
      sealed = this.#box.seal(JSON.stringify(headers), id);
    }
    const [{ count } = { count: 0 }] = await this.#db.query<{ count: number }>(
      'select count(*)::int as count from mcp_servers where project_id = $1',
      [principal.projectId],
    );
    if (count >= MAX_SERVERS) {
      throw new BadRequestError(
        'too_many_servers',
        `A project registers at most ${MAX_SERVERS} MCP servers.`,
        {
          param: 'label',
        },
      );
    }
    const rows = await this.#db.query<Row>(
      `insert into mcp_servers (id, account_id, project_id, label, url, headers, header_names, allowed_tools, created)
       values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9)
       on conflict (project_id, label) do nothing
       returning id, project_id, label, url, headers, header_names, allowed_tools, created`,
      [
        id,
        principal.accountId,
        principal.projectId,
        input.label,
        url,
        sealed,
        JSON.stringify(names),
        input.allowed_tools === undefined || input.allowed_tools === null
          ? null
          : JSON.stringify(input.allowed_tools),
        nowSeconds(),
      ],
    );
    const row = rows[0];
    if (row === undefined) {
      throw new ConflictError(
        'label_taken',
        `An MCP server labelled '${input.label}' is already registered in this project.`,
        {
          param: 'label',
        },
      );
    }
    return toServer(row);
  }

  async list(principal: Principal, limit: number, cursor: string | undefined): Promise<Page<McpServer>> {
    return pageNewestFirst(
      this.#db,
      `select id, project_id, label, url, headers, header_names, allowed_tools, created from mcp_servers
       where project_id = $1`,
      [principal.projectId],
      { limit, cursor },
      toServer,
    );
  }

  async get(principal: Principal, id: string): Promise<McpServer> {
    const [row] = await this.#db.query<Row>(
      `select id, project_id, label, url, headers, header_names, allowed_tools, created from mcp_servers
       where id = $1 and project_id = $2`,
      [id, principal.projectId],
    );
    if (row === undefined) throw notFound(id);
    return toServer(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const rows = await this.#db.query(
      'delete from mcp_servers where id = $1 and project_id = $2 returning id',
      [id, principal.projectId],
    );
    if (rows.length === 0) throw notFound(id);
  }

  /** Every server of the project, headers opened (a server whose headers cannot be opened has none). */
  async forProject(projectId: string): Promise<RegisteredServer[]> {
    const rows = await this.#db.query<Row>(
      `select id, project_id, label, url, headers, header_names, allowed_tools, created from mcp_servers
       where project_id = $1 order by label`,
      [projectId],
    );
    return rows.map((row) => {
      let headers: Record<string, string> = {};
      if (row.headers !== null && this.#box !== undefined) {
        try {
          headers = JSON.parse(this.#box.open(row.headers, row.id)) as Record<string, string>;
        } catch {
          headers = {};
        }
      }
      return { id: row.id, label: row.label, url: row.url, headers, allowedTools: row.allowed_tools };
    });
  }
}
