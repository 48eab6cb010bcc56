// The CRM routes of the directory API: connections (made after the CRM accepted the
// credentials), their syncs and each sync's records. Scope `sales`, checked by the security
// handler as the spec says; everything belongs to the key's project.
import { pageReply } from '../platform/pagination.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import type { CrmConnections } from './connections.ts';
import type { CrmSyncs } from './syncs.ts';

export function createCrmRouter({ connections, syncs }: { connections: CrmConnections; syncs: CrmSyncs }) {
  const api: OperationRouter = operationRouter();

  api.on('createCrmConnection', async ({ body, principal }) => ({
    status: 201,
    body: await connections.create(principal(), body),
  }));
  api.on('listCrmConnections', async ({ query, req, principal }) =>
    pageReply(req, await connections.list(principal().projectId, query?.limit ?? 20, query?.cursor)),
  );
  api.on('getCrmConnection', async ({ path, principal }) => ({
    status: 200,
    body: await connections.get(principal().projectId, path.id),
  }));
  api.on('updateCrmConnection', async ({ path, body, principal }) => ({
    status: 200,
    body: await connections.update(principal().projectId, path.id, body),
  }));
  api.on('deleteCrmConnection', async ({ path, principal }) => {
    await connections.delete(principal().projectId, path.id);
    return { status: 200, body: { id: path.id, object: 'crm_connection', deleted: true } };
  });
  api.on('syncCrmConnection', async ({ path, body, principal }) => ({
    status: 202,
    body: await syncs.create(principal(), path.id, body),
  }));
  api.on('listCrmSyncs', async ({ path, query, req, principal }) =>
    pageReply(req, await syncs.list(principal().projectId, path.id, query?.limit ?? 20, query?.cursor)),
  );
  api.on('getCrmSync', async ({ path, principal }) => ({
    status: 200,
    body: await syncs.get(principal().projectId, path.id, path.sync_id),
  }));
  api.on('listCrmSyncRecords', async ({ path, query, req, principal }) =>
    pageReply(
      req,
      await syncs.records(principal().projectId, path.id, path.sync_id, {
        limit: query?.limit ?? 20,
        cursor: query?.cursor,
        result: query?.result,
      }),
    ),
  );

  return api;
}
