// The Concierge routes of the directory API: briefs in, workflows out. Scope `concierge` is
// checked by the security handler, as the spec says; workflows belong to the key's project.
import { pageReply } from '../platform/pagination.ts';
import { requestIdOf } from '../platform/request-id.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import type { Workflows } from './workflows.ts';

export function createConciergeRouter(workflows: Workflows) {
  const api: OperationRouter = operationRouter();

  api.on('createConciergeBrief', async ({ body, res, principal }) => {
    const workflow = await workflows.create(principal(), body, requestIdOf(res));
    return { status: 202, body: workflow, headers: { Location: `/v1/concierge/workflows/${workflow.id}` } };
  });
  api.on('listWorkflows', async ({ query, req, principal }) =>
    pageReply(
      req,
      await workflows.list(principal().projectId, {
        limit: query?.limit ?? 20,
        cursor: query?.cursor,
        status: query?.status,
      }),
    ),
  );
  api.on('getWorkflow', async ({ path, principal }) => ({
    status: 200,
    body: await workflows.get(principal().projectId, path.id),
  }));
  api.on('cancelWorkflow', async ({ path, principal }) => ({
    status: 200,
    body: await workflows.cancel(principal().projectId, path.id),
  }));
  return api;
}
