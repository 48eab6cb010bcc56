// The routes of /v1/mcp/servers (scope `agents`): remote MCP servers registered per project.
import type { Router } from 'express';
import type {
  CreateMcpServerData,
  CreateMcpServerResponses,
  DeleteMcpServerData,
  DeleteMcpServerResponses,
  GetMcpServerData,
  GetMcpServerResponses,
  ListMcpServersData,
  ListMcpServersResponses,
} from '../../generated/model/client/types.gen.ts';
import { pageReply } from '../platform/pagination.ts';
import { typedRouter } from '../platform/route.ts';
import type { McpServerStore } from './registry.ts';

export function createMcpServersRouter(store: McpServerStore): Router {
  const api = typedRouter();
  api.post<CreateMcpServerData, CreateMcpServerResponses>('/v1/mcp/servers', async ({ body, principal }) => ({
    status: 201,
    body: await store.create(principal(), body),
  }));
  api.get<ListMcpServersData, ListMcpServersResponses>('/v1/mcp/servers', async ({ query, req, principal }) =>
    pageReply(req, await store.list(principal(), query?.limit ?? 20, query?.cursor)),
  );
  api.get<GetMcpServerData, GetMcpServerResponses>('/v1/mcp/servers/{id}', async ({ path, principal }) => ({
    status: 200,
    body: await store.get(principal(), path.id),
  }));
  api.delete<DeleteMcpServerData, DeleteMcpServerResponses>(
    '/v1/mcp/servers/{id}',
    async ({ path, principal }) => {
      await store.delete(principal(), path.id);
      return { status: 204, body: undefined as never };
    },
  );
  return api.router;
}
