// Keys and projects of the model API (scope `admin`, checked by the security handler).
import { NotFoundError } from '../platform/errors.ts';
import { pageReply } from '../platform/pagination.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import type { Authenticator } from './auth.ts';
import type { AccountStore } from './store.ts';

export function createAccountsRouter(store: AccountStore, auth: Authenticator) {
  const api: OperationRouter = operationRouter();

  api.on('createKey', async ({ body, principal }) => ({
    status: 201,
    body: await store.createKey(principal().accountId, {
      name: body.name,
      projectId: body.project_id,
      scopes: body.scopes,
      expiresAt: body.expires_at,
    }),
  }));

  api.on('listKeys', async ({ query, req, principal }) => {
    const accountId = principal().accountId;
    // another account's project is unknown here, as on GET /v1/projects/{id}
    if (query?.project_id !== undefined) {
      await store.getProject(accountId, query.project_id).catch((err: unknown) => {
        throw err instanceof NotFoundError
          ? new NotFoundError('not_found', err.message, { param: 'project_id' })
          : err;
      });
    }
    return pageReply(
      req,
      await store.listKeys(accountId, query?.limit ?? 20, query?.cursor, query?.project_id),
    );
  });

  api.on('getKey', async ({ path, principal }) => ({
    status: 200,
    body: await store.getKey(principal().accountId, path.id),
  }));

  api.on('revokeKey', async ({ path, principal }) => {
    const key = await store.revokeKey(principal().accountId, path.id);
    await auth.invalidate(key.id);
    return { status: 200, body: key };
  });

  api.on('rotateKey', async ({ path, body, principal }) => {
    const key = await store.rotateKey(principal().accountId, path.id, body?.grace_period_seconds ?? 0);
    await auth.invalidate(key.id);
    return { status: 200, body: key };
  });

  api.on('createProject', async ({ body, principal }) => ({
    status: 201,
    body: await store.createProject(principal().accountId, body.name, body.metadata ?? {}),
  }));

  api.on('listProjects', async ({ query, req, principal }) =>
    pageReply(req, await store.listProjects(principal().accountId, query?.limit ?? 20, query?.cursor)),
  );

  api.on('getProject', async ({ path, principal }) => ({
    status: 200,
    body: await store.getProject(principal().accountId, path.id),
  }));

  api.on('updateProject', async ({ path, body, principal }) => {
    const changes: { name?: string; metadata?: Record<string, string> } = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.metadata !== undefined) changes.metadata = body.metadata;
    return { status: 200, body: await store.updateProject(principal().accountId, path.id, changes) };
  });

  return api;
}
