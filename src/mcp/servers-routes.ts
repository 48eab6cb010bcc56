// The routes of /v1/mcp/servers (scope `agents`): remote MCP servers registered per project.
import { pageReply } from '../platform/pagination.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import type { McpServerStore } from './registry.ts';

export function createMcpServersRouter(store: McpServerStore) {
  const api: OperationRouter = operationRouter();
  api.on('createMcpServer', async ({ body, principal }) => ({
    status: 201,
    body: await store.create(principal(), body),
  }));
  api.on('listMcpServers', async ({ query, req, principal }) =>
    pageReply(req, await store.list(principal(), query?.limit ?? 20, query?.cursor)),
  );
  api.on('getMcpServer', async ({ path, principal }) => ({
    status: 200,
    body: await store.get(principal(), path.id),
  }));
  api.on('deleteMcpServer', async ({ path, principal }) => {
    await store.delete(principal(), path.id);
    return { status: 204, body: undefined as never };
  });
  return api;
}
