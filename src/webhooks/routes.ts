// /v1/webhook-endpoints: register, list, read, change, rotate the secret of and delete a
// project's webhook endpoints, send them a test event, and list and re-send their messages.
// Scope `concierge` is checked by the security handler, as the spec says.
import { pageReply } from '../platform/pagination.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import type { WebhookDelivery } from './delivery.ts';
import { endpointOf, type WebhookStore } from './store.ts';

export function createWebhookRouter(store: WebhookStore, delivery: WebhookDelivery) {
  const api: OperationRouter = operationRouter();
  api.on('createWebhookEndpoint', async ({ body, principal }) => ({
    status: 201,
    body: await store.create(principal().projectId, body),
  }));
  api.on('listWebhookEndpoints', async ({ query, req, principal }) =>
    pageReply(req, await store.list(principal().projectId, query?.limit ?? 20, query?.cursor)),
  );
  api.on('getWebhookEndpoint', async ({ path, principal }) => ({
    status: 200,
    body: await store.get(principal().projectId, path.id),
  }));
  api.on('updateWebhookEndpoint', async ({ path, body, principal }) => {
    const { before, after } = await store.update(principal().projectId, path.id, body);
    if (!before.enabled && after.enabled) await delivery.resume(after.id);
    return { status: 200, body: endpointOf(after) };
  });
  api.on('deleteWebhookEndpoint', async ({ path, principal }) => {
    await store.delete(principal().projectId, path.id);
    return { status: 200, body: { id: path.id, object: 'webhook_endpoint', deleted: true } };
  });
  api.on('rotateWebhookEndpointSecret', async ({ path, body, principal }) => ({
    status: 200,
    body: await store.rotate(principal().projectId, path.id, body?.previous_secret_expires_in ?? 86_400),
  }));
  api.on('sendTestWebhookEvent', async ({ path, principal }) => ({
    status: 202,
    body: await delivery.test(principal().projectId, path.id),
  }));
  api.on('listWebhookMessages', async ({ path, query, req, principal }) =>
    pageReply(
      req,
      await store.messages(principal().projectId, path.id, query?.limit ?? 20, query?.cursor, query?.status),
    ),
  );
  api.on('resendWebhookMessage', async ({ path, principal }) => ({
    status: 202,
    body: await delivery.resend(principal().projectId, path.id, path.message_id),
  }));
  return api;
}
