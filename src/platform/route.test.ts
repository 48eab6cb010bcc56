// Routes are bound by operationId: the method and path come from the spec, and an assembly whose
// routers leave an operation of its spec without a handler does not compile. The compile-time
// half is held by `@ts-expect-error` lines: if they stopped being errors, `npm run typecheck` fails.
import express, { type Router } from 'express';
import { describe, expect, it } from 'vitest';
import { operationRouter, type OperationRouter, serves } from './route.ts';

function modelsRouter() {
  const api: OperationRouter = operationRouter();
  api.on('listModels', () => ({
    status: 200,
    body: { object: 'list', data: [], has_more: false, next_cursor: null },
  }));
  return api;
}

function modelRouter() {
  const api: OperationRouter = operationRouter();
  api.on('getModel', ({ path }) => ({
    status: 200,
    body: { id: path.model, object: 'model', created: 0, owned_by: 'eurus' } as never,
  }));
  return api;
}

describe('operationRouter', () => {
  it('registers a handler at the method and path its operationId names', async () => {
    const app = express().use(modelsRouter().router, modelRouter().router);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    try {
      const list = await fetch(`http://127.0.0.1:${port}/v1/models`);
      expect(list.status).toBe(200);
      expect(await list.json()).toMatchObject({ object: 'list', data: [] });
      const one = await fetch(`http://127.0.0.1:${port}/v1/models/queen`);
      expect(((await one.json()) as { id: string }).id).toBe('queen');
      // the same path with another method is not this operation's
      expect((await fetch(`http://127.0.0.1:${port}/v1/models`, { method: 'POST' })).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('serves: all of the operations compiles; one missing or foreign does not', () => {
    const complete: Router[] = serves<'listModels' | 'getModel'>()(modelsRouter(), modelRouter());
    expect(complete).toHaveLength(2);
    // @ts-expect-error getModel has no handler: `{ missing: "getModel" }` is no Router[]
    const missing: Router[] = serves<'listModels' | 'getModel'>()(modelsRouter());
    // @ts-expect-error getModel is not an operation of this (planted) service: `{ extra: "getModel" }`
    const extra: Router[] = serves<'listModels'>()(modelsRouter(), modelRouter());
    expect([missing, extra]).toHaveLength(2);
  });

  it('refuses a handler for an operationId of neither spec, at compile time and at run time', () => {
    const api: OperationRouter = operationRouter();
    // @ts-expect-error no operation listWidgets in either spec
    expect(() => api.on('listWidgets', () => ({ status: 200, body: {} }))).toThrow(
      /no operation listWidgets/,
    );
  });
});
