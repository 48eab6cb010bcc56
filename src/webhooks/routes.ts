// /v1/webhook-endpoints: register, list, read, change, rotate the secret of and delete a
// project's webhook endpoints, send them a test event, and list and re-send their messages.
// Scope `concierge` is checked by the security handler, as the spec says.
import type { Router } from 'express';
import type {
  CreateWebhookEndpointData,
  CreateWebhookEndpointResponses,
  DeleteWebhookEndpointData,
  DeleteWebhookEndpointResponses,
  GetWebhookEndpointData,
  GetWebhookEndpointResponses,
  ListWebhookEndpointsData,
  ListWebhookEndpointsResponses,
  ListWebhookMessagesData,
  ListWebhookMessagesResponses,
  ResendWebhookMessageData,
  ResendWebhookMessageResponses,
  RotateWebhookEndpointSecretData,
  RotateWebhookEndpointSecretResponses,
  SendTestWebhookEventData,
  SendTestWebhookEventResponses,
  UpdateWebhookEndpointData,
  UpdateWebhookEndpointResponses,
} from '../../generated/directory/client/types.gen.ts';
import { pageReply } from '../platform/pagination.ts';
import { typedRouter } from '../platform/route.ts';
import type { WebhookDelivery } from './delivery.ts';
import { endpointOf, type WebhookStore } from './store.ts';

export function createWebhookRouter(store: WebhookStore, delivery: WebhookDelivery): Router {
  const api = typedRouter();
  api.post<CreateWebhookEndpointData, CreateWebhookEndpointResponses>(
    '/v1/webhook-endpoints',
    async ({ body, principal }) => ({ status: 201, body: await store.create(principal().projectId, body) }),
  );
  api.get<ListWebhookEndpointsData, ListWebhookEndpointsResponses>(
    '/v1/webhook-endpoints',
    async ({ query, req, principal }) =>
      pageReply(req, await store.list(principal().projectId, query?.limit ?? 20, query?.cursor)),
  );
  api.get<GetWebhookEndpointData, GetWebhookEndpointResponses>(
    '/v1/webhook-endpoints/{id}',
    async ({ path, principal }) => ({ status: 200, body: await store.get(principal().projectId, path.id) }),
  );
  api.patch<UpdateWebhookEndpointData, UpdateWebhookEndpointResponses>(
    '/v1/webhook-endpoints/{id}',
    async ({ path, body, principal }) => {
      const { before, after } = await store.update(principal().projectId, path.id, body);
      if (!before.enabled && after.enabled) await delivery.resume(after.id);
      return { status: 200, body: endpointOf(after) };
    },
  );
  api.delete<DeleteWebhookEndpointData, DeleteWebhookEndpointResponses>(
    '/v1/webhook-endpoints/{id}',
    async ({ path, principal }) => {
      await store.delete(principal().projectId, path.id);
      return { status: 200, body: { id: path.id, object: 'webhook_endpoint', deleted: true } };
    },
  );
  api.post<RotateWebhookEndpointSecretData, RotateWebhookEndpointSecretResponses>(
    '/v1/webhook-endpoints/{id}/rotate-secret',
    async ({ path, body, principal }) => ({
      status: 200,
      body: await store.rotate(principal().projectId, path.id, body?.previous_secret_expires_in ?? 86_400),
    }),
  );
  api.post<SendTestWebhookEventData, SendTestWebhookEventResponses>(
    '/v1/webhook-endpoints/{id}/test',
    async ({ path, principal }) => ({
      status: 202,
      body: await delivery.test(principal().projectId, path.id),
    }),
  );
  api.get<ListWebhookMessagesData, ListWebhookMessagesResponses>(
    '/v1/webhook-endpoints/{id}/messages',
    async ({ path, query, req, principal }) =>
      pageReply(
        req,
        await store.messages(
          principal().projectId,
          path.id,
          query?.limit ?? 20,
          query?.cursor,
          query?.status,
        ),
      ),
  );
  api.post<ResendWebhookMessageData, ResendWebhookMessageResponses>(
    '/v1/webhook-endpoints/{id}/messages/{message_id}/resend',
    async ({ path, principal }) => ({
      status: 202,
      body: await delivery.resend(principal().projectId, path.id, path.message_id),
    }),
  );
  return api.router;
}
