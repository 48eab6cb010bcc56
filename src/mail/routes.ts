// /v1/sending-domains: add, list, read, delete and verify a project's sending domains. Scope
// `sales` is checked by the security handler, as the spec says.
import { pageReply } from '../platform/pagination.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import type { SendingDomainStore } from './domains.ts';

export function createSendingDomainRouter(store: SendingDomainStore) {
  const api: OperationRouter = operationRouter();
  api.on('createSendingDomain', async ({ body, principal }) => {
    const { accountId, projectId } = principal();
    return { status: 201, body: await store.create({ accountId, projectId }, body) };
  });
  api.on('listSendingDomains', async ({ query, req, principal }) =>
    pageReply(req, await store.list(principal().projectId, query?.limit ?? 20, query?.cursor)),
  );
  api.on('getSendingDomain', async ({ path, principal }) => ({
    status: 200,
    body: await store.get(principal().projectId, path.id),
  }));
  api.on('deleteSendingDomain', async ({ path, principal }) => {
    await store.delete(principal().projectId, path.id);
    return { status: 200, body: { id: path.id, object: 'sending_domain', deleted: true } };
  });
  api.on('verifySendingDomain', async ({ path, principal }) => ({
    status: 200,
    body: await store.verify(principal().projectId, path.id),
  }));
  return api;
}
