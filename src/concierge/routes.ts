// The Concierge routes of the directory API: briefs in, workflows out. Scope `concierge` is
// checked by the security handler, as the spec says; workflows belong to the key's project.
import type { Router } from 'express';
import type {
  CancelWorkflowData,
  CancelWorkflowResponses,
  CreateConciergeBriefData,
  CreateConciergeBriefResponses,
  GetWorkflowData,
  GetWorkflowResponses,
  ListWorkflowsData,
  ListWorkflowsResponses,
} from '../../generated/directory/client/types.gen.ts';
import { pageReply } from '../platform/pagination.ts';
import { requestIdOf } from '../platform/request-id.ts';
import { typedRouter } from '../platform/route.ts';
import type { Workflows } from './workflows.ts';

export function createConciergeRouter(workflows: Workflows): Router {
  const api = typedRouter();

  api.post<CreateConciergeBriefData, CreateConciergeBriefResponses>(
    '/v1/concierge/briefs',
    async ({ body, res, principal }) => {
      const workflow = await workflows.create(principal(), body, requestIdOf(res));
      return { status: 202, body: workflow, headers: { Location: `/v1/concierge/workflows/${workflow.id}` } };
    },
  );
  api.get<ListWorkflowsData, ListWorkflowsResponses>(
    '/v1/concierge/workflows',
    async ({ query, req, principal }) =>
      pageReply(
        req,
        await workflows.list(principal().projectId, {
          limit: query?.limit ?? 20,
          cursor: query?.cursor,
          status: query?.status,
        }),
      ),
  );
  api.get<GetWorkflowData, GetWorkflowResponses>(
    '/v1/concierge/workflows/{id}',
    async ({ path, principal }) => ({
      status: 200,
      body: await workflows.get(principal().projectId, path.id),
    }),
  );
  api.post<CancelWorkflowData, CancelWorkflowResponses>(
    '/v1/concierge/workflows/{id}/cancel',
    async ({ path, principal }) => ({
      status: 200,
      body: await workflows.cancel(principal().projectId, path.id),
    }),
  );
  return api.router;
}
