// The CRM routes of the directory API: connections (made after the CRM accepted the
// credentials), their syncs and each sync's records. Scope `sales`, checked by the security
// handler as the spec says; everything belongs to the key's project.
import type { Router } from 'express';
import type {
  CreateCrmConnectionData,
  CreateCrmConnectionResponses,
  DeleteCrmConnectionData,
  DeleteCrmConnectionResponses,
  GetCrmConnectionData,
  GetCrmConnectionResponses,
  GetCrmSyncData,
  GetCrmSyncResponses,
  ListCrmConnectionsData,
  ListCrmConnectionsResponses,
  ListCrmSyncRecordsData,
  ListCrmSyncRecordsResponses,
  ListCrmSyncsData,
  ListCrmSyncsResponses,
  SyncCrmConnectionData,
  SyncCrmConnectionResponses,
  UpdateCrmConnectionData,
  UpdateCrmConnectionResponses,
} from '../../generated/directory/client/types.gen.ts';
import { pageReply } from '../platform/pagination.ts';
import { typedRouter } from '../platform/route.ts';
import type { CrmConnections } from './connections.ts';
import type { CrmSyncs } from './syncs.ts';

export function createCrmRouter({
  connections,
  syncs,
}: {
  connections: CrmConnections;
  syncs: CrmSyncs;
}): Router {
  const api = typedRouter();

  api.post<CreateCrmConnectionData, CreateCrmConnectionResponses>(
    '/v1/crm-connections',
    async ({ body, principal }) => ({ status: 201, body: await connections.create(principal(), body) }),
  );
  api.get<ListCrmConnectionsData, ListCrmConnectionsResponses>(
    '/v1/crm-connections',
    async ({ query, req, principal }) =>
      pageReply(req, await connections.list(principal().projectId, query?.limit ?? 20, query?.cursor)),
  );
  api.get<GetCrmConnectionData, GetCrmConnectionResponses>(
    '/v1/crm-connections/{id}',
    async ({ path, principal }) => ({
      status: 200,
      body: await connections.get(principal().projectId, path.id),
    }),
  );
  api.patch<UpdateCrmConnectionData, UpdateCrmConnectionResponses>(
    '/v1/crm-connections/{id}',
    async ({ path, body, principal }) => ({
      status: 200,
      body: await connections.update(principal().projectId, path.id, body),
    }),
  );
  api.delete<DeleteCrmConnectionData, DeleteCrmConnectionResponses>(
    '/v1/crm-connections/{id}',
    async ({ path, principal }) => {
      await connections.delete(principal().projectId, path.id);
      return { status: 200, body: { id: path.id, object: 'crm_connection', deleted: true } };
    },
  );
  api.post<SyncCrmConnectionData, SyncCrmConnectionResponses>(
    '/v1/crm-connections/{id}/syncs',
    async ({ path, body, principal }) => ({
      status: 202,
      body: await syncs.create(principal(), path.id, body),
    }),
  );
  api.get<ListCrmSyncsData, ListCrmSyncsResponses>(
    '/v1/crm-connections/{id}/syncs',
    async ({ path, query, req, principal }) =>
      pageReply(req, await syncs.list(principal().projectId, path.id, query?.limit ?? 20, query?.cursor)),
  );
  api.get<GetCrmSyncData, GetCrmSyncResponses>(
    '/v1/crm-connections/{id}/syncs/{sync_id}',
    async ({ path, principal }) => ({
      status: 200,
      body: await syncs.get(principal().projectId, path.id, path.sync_id),
    }),
  );
  api.get<ListCrmSyncRecordsData, ListCrmSyncRecordsResponses>(
    '/v1/crm-connections/{id}/syncs/{sync_id}/records',
    async ({ path, query, req, principal }) =>
      pageReply(
        req,
        await syncs.records(principal().projectId, path.id, path.sync_id, {
          limit: query?.limit ?? 20,
          cursor: query?.cursor,
          result: query?.result,
        }),
      ),
  );

  return api.router;
}
