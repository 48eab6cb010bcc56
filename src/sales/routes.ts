// The Sales routes of the directory API that src/sales owns: target lists and their members,
// and the account's suppression list. Scope `sales` is checked by the security handler, as
// the spec says; lists belong to the key's project, suppressions to its account.
import type { Router } from 'express';
import type {
  AddTargetListMemberData,
  AddTargetListMemberResponses,
  CreateSuppressionData,
  CreateSuppressionResponses,
  CreateTargetListData,
  CreateTargetListResponses,
  DeleteSuppressionData,
  DeleteSuppressionResponses,
  DeleteTargetListData,
  DeleteTargetListResponses,
  GetSuppressionData,
  GetSuppressionResponses,
  GetTargetListData,
  GetTargetListResponses,
  ListSuppressionsData,
  ListSuppressionsResponses,
  ListTargetListMembersData,
  ListTargetListMembersResponses,
  ListTargetListsData,
  ListTargetListsResponses,
  RemoveTargetListMemberData,
  RemoveTargetListMemberResponses,
} from '../../generated/directory/client/types.gen.ts';
import { pageReply } from '../platform/pagination.ts';
import { typedRouter } from '../platform/route.ts';
import type { Suppressions } from './suppressions.ts';
import type { TargetLists } from './target-lists.ts';

export interface SalesRouterParts {
  targetLists: TargetLists;
  suppressions: Suppressions;
}

export function createSalesRouter({ targetLists, suppressions }: SalesRouterParts): Router {
  const api = typedRouter();

  api.post<CreateTargetListData, CreateTargetListResponses>(
    '/v1/target-lists',
    async ({ body, principal }) => ({ status: 201, body: await targetLists.create(principal(), body) }),
  );
  api.get<ListTargetListsData, ListTargetListsResponses>(
    '/v1/target-lists',
    async ({ query, req, principal }) =>
      pageReply(req, await targetLists.list(principal().projectId, query?.limit ?? 20, query?.cursor)),
  );
  api.get<GetTargetListData, GetTargetListResponses>(
    '/v1/target-lists/{id}',
    async ({ path, principal }) => ({
      status: 200,
      body: await targetLists.get(principal().projectId, path.id),
    }),
  );
  api.delete<DeleteTargetListData, DeleteTargetListResponses>(
    '/v1/target-lists/{id}',
    async ({ path, principal }) => {
      await targetLists.delete(principal().projectId, path.id);
      return { status: 200, body: { id: path.id, object: 'target_list', deleted: true } };
    },
  );
  api.get<ListTargetListMembersData, ListTargetListMembersResponses>(
    '/v1/target-lists/{id}/members',
    async ({ path, query, req, principal }) =>
      pageReply(
        req,
        await targetLists.members(principal().projectId, path.id, {
          limit: query?.limit ?? 20,
          cursor: query?.cursor,
          status: query?.status,
        }),
      ),
  );
  api.post<AddTargetListMemberData, AddTargetListMemberResponses>(
    '/v1/target-lists/{id}/members',
    async ({ path, body, principal }) => ({
      status: 201,
      body: await targetLists.addMember(principal().projectId, path.id, body.listing_id),
    }),
  );
  api.delete<RemoveTargetListMemberData, RemoveTargetListMemberResponses>(
    '/v1/target-lists/{id}/members/{listing_id}',
    async ({ path, principal }) => ({
      status: 200,
      body: {
        id: await targetLists.removeMember(principal().projectId, path.id, path.listing_id),
        object: 'target_list_member',
        deleted: true,
      },
    }),
  );

  api.get<ListSuppressionsData, ListSuppressionsResponses>(
    '/v1/suppressions',
    async ({ query, req, principal }) =>
      pageReply(
        req,
        await suppressions.list(principal().accountId, {
          limit: query?.limit ?? 20,
          cursor: query?.cursor,
          reason: query?.reason,
        }),
      ),
  );
  api.post<CreateSuppressionData, CreateSuppressionResponses>(
    '/v1/suppressions',
    async ({ body, principal }) => {
      const { created, suppression } = await suppressions.add(principal().accountId, body.email);
      return created ? { status: 201, body: suppression } : { status: 200, body: suppression };
    },
  );
  api.get<GetSuppressionData, GetSuppressionResponses>(
    '/v1/suppressions/{email}',
    async ({ path, principal }) => ({
      status: 200,
      body: await suppressions.get(principal().accountId, path.email),
    }),
  );
  api.delete<DeleteSuppressionData, DeleteSuppressionResponses>(
    '/v1/suppressions/{email}',
    async ({ path, principal }) => ({
      status: 200,
      body: {
        id: await suppressions.remove(principal().accountId, path.email),
        object: 'suppression',
        deleted: true,
      },
    }),
  );

  return api.router;
}
