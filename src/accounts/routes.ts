// Keys and projects of the model API (scope `admin`, checked by the security handler).
import { type Request, type Response, Router } from 'express';
import type {
  CreateKeyData,
  CreateProjectData,
  RotateKeyData,
  UpdateProjectData,
} from '../../generated/model/client/types.gen.ts';
import { principalOf } from '../platform/principal.ts';
import { setNextLink } from '../platform/pagination.ts';
import type { Authenticator } from './auth.ts';
import type { AccountStore } from './store.ts';

export function limitOf(req: Request): number {
  const raw = req.query.limit;
  return raw === undefined ? 20 : Number(raw);
}

export function cursorOf(req: Request): string | undefined {
  return typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
}

export function createAccountsRouter(store: AccountStore, auth: Authenticator): Router {
  const router = Router();

  router.post('/v1/keys', async (req: Request, res: Response) => {
    const body = req.body as CreateKeyData['body'];
    const { accountId } = principalOf(res);
    const key = await store.createKey(accountId, {
      name: body.name,
      projectId: body.project_id,
      scopes: body.scopes,
      expiresAt: body.expires_at,
    });
    res.status(201).json(key);
  });

  router.get('/v1/keys', async (req, res) => {
    const projectId = typeof req.query.project_id === 'string' ? req.query.project_id : undefined;
    const page = await store.listKeys(principalOf(res).accountId, limitOf(req), cursorOf(req), projectId);
    setNextLink(req, res, page);
    res.json(page);
  });

  router.get('/v1/keys/:id', async (req, res) => {
    res.json(await store.getKey(principalOf(res).accountId, req.params.id as string));
  });

  router.delete('/v1/keys/:id', async (req, res) => {
    const key = await store.revokeKey(principalOf(res).accountId, req.params.id as string);
    await auth.invalidate(key.id);
    res.json(key);
  });

  router.post('/v1/keys/:id/rotate', async (req, res) => {
    const body = (req.body ?? {}) as NonNullable<RotateKeyData['body']>;
    const key = await store.rotateKey(
      principalOf(res).accountId,
      req.params.id as string,
      body.grace_period_seconds ?? 0,
    );
    await auth.invalidate(key.id);
    res.json(key);
  });

  router.post('/v1/projects', async (req, res) => {
    const body = req.body as CreateProjectData['body'];
    res
      .status(201)
      .json(await store.createProject(principalOf(res).accountId, body.name, body.metadata ?? {}));
  });

  router.get('/v1/projects', async (req, res) => {
    const page = await store.listProjects(principalOf(res).accountId, limitOf(req), cursorOf(req));
    setNextLink(req, res, page);
    res.json(page);
  });

  router.get('/v1/projects/:id', async (req, res) => {
    res.json(await store.getProject(principalOf(res).accountId, req.params.id as string));
  });

  router.patch('/v1/projects/:id', async (req, res) => {
    const body = req.body as UpdateProjectData['body'];
    const changes: { name?: string; metadata?: Record<string, string> } = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.metadata !== undefined) changes.metadata = body.metadata;
    res.json(await store.updateProject(principalOf(res).accountId, req.params.id as string, changes));
  });

  return router;
}
