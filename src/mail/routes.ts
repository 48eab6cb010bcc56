// /v1/sending-domains: add, list, read, delete and verify a project's sending domains. Scope
// `sales` is checked by the security handler, as the spec says.
import type { Router } from 'express';
import type {
  CreateSendingDomainData,
  CreateSendingDomainResponses,
  DeleteSendingDomainData,
  DeleteSendingDomainResponses,
  GetSendingDomainData,
  GetSendingDomainResponses,
  ListSendingDomainsData,
  ListSendingDomainsResponses,
  VerifySendingDomainData,
  VerifySendingDomainResponses,
} from '../../generated/directory/client/types.gen.ts';
import { pageReply } from '../platform/pagination.ts';
import { typedRouter } from '../platform/route.ts';
import type { SendingDomainStore } from './domains.ts';

export function createSendingDomainRouter(store: SendingDomainStore): Router {
  const api = typedRouter();
  api.post<CreateSendingDomainData, CreateSendingDomainResponses>(
    '/v1/sending-domains',
    async ({ body, principal }) => {
      const { accountId, projectId } = principal();
      return { status: 201, body: await store.create({ accountId, projectId }, body) };
    },
  );
  api.get<ListSendingDomainsData, ListSendingDomainsResponses>(
    '/v1/sending-domains',
    async ({ query, req, principal }) =>
      pageReply(req, await store.list(principal().projectId, query?.limit ?? 20, query?.cursor)),
  );
  api.get<GetSendingDomainData, GetSendingDomainResponses>(
    '/v1/sending-domains/{id}',
    async ({ path, principal }) => ({ status: 200, body: await store.get(principal().projectId, path.id) }),
  );
  api.delete<DeleteSendingDomainData, DeleteSendingDomainResponses>(
    '/v1/sending-domains/{id}',
    async ({ path, principal }) => {
      await store.delete(principal().projectId, path.id);
      return { status: 200, body: { id: path.id, object: 'sending_domain', deleted: true } };
    },
  );
  api.post<VerifySendingDomainData, VerifySendingDomainResponses>(
    '/v1/sending-domains/{id}/verify',
    async ({ path, principal }) => ({
      status: 200,
      body: await store.verify(principal().projectId, path.id),
    }),
  );
  return api.router;
}
