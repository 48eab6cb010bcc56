// The Sales routes of the directory API that src/sales owns: target lists and their members,
// campaigns and their recipients, replies, the account's suppression list, and the opt-out
// endpoints of campaign mail. Scope `sales` is checked by the security handler, as the spec
// says (the opt-out endpoints take no key: their token is signed); lists, campaigns and replies
// belong to the key's project, suppressions to its account.
import type { Request, Response, Router } from 'express';
import type {
  CancelCampaignData,
  CancelCampaignResponses,
  CreateCampaignData,
  CreateCampaignResponses,
  GetCampaignData,
  GetCampaignResponses,
  GetReplyData,
  GetReplyResponses,
  GetUnsubscribePageData,
  GetUnsubscribePageResponses,
  LaunchCampaignData,
  LaunchCampaignResponses,
  ListCampaignRecipientsData,
  ListCampaignRecipientsResponses,
  ListCampaignsData,
  ListCampaignsResponses,
  ListRepliesData,
  ListRepliesResponses,
  PauseCampaignData,
  PauseCampaignResponses,
  ResumeCampaignData,
  ResumeCampaignResponses,
  ScheduleCampaignData,
  ScheduleCampaignResponses,
  UnsubscribeData,
  UnsubscribeResponses,
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
import { NotFoundError } from '../platform/errors.ts';
import { pageReply } from '../platform/pagination.ts';
import { SENT, typedRouter } from '../platform/route.ts';
import type { Campaigns } from './campaigns.ts';
import type { Replies } from './replies.ts';
import type { Suppressions } from './suppressions.ts';
import type { TargetLists } from './target-lists.ts';
import { invalidPage, type Unsubscribes } from './unsubscribe.ts';

export interface SalesRouterParts {
  targetLists: TargetLists;
  suppressions: Suppressions;
  campaigns: Campaigns;
  replies: Replies;
  unsubscribes: Unsubscribes;
}

/** An HTML page, sent as it is (the validator checks JSON answers only). */
function html(res: Response, status: number, body: string): typeof SENT {
  res.status(status).type('text/html; charset=utf-8').setHeader('Cache-Control', 'no-store');
  res.send(body);
  return SENT;
}

/** A token that is not ours: a page for a browser, the error envelope for anything else. */
function invalidLink(req: Request, res: Response): typeof SENT {
  if (req.accepts(['application/json', 'text/html']) === 'text/html') return html(res, 404, invalidPage());
  throw new NotFoundError('unsubscribe_link_invalid', 'This unsubscribe link is not valid.', {
    param: 'token',
  });
}

export function createSalesRouter({
  targetLists,
  suppressions,
  campaigns,
  replies,
  unsubscribes,
}: SalesRouterParts): Router {
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

  api.post<CreateCampaignData, CreateCampaignResponses>('/v1/campaigns', async ({ body, principal }) => ({
    status: 201,
    body: await campaigns.create(principal(), body),
  }));
  api.get<ListCampaignsData, ListCampaignsResponses>('/v1/campaigns', async ({ query, req, principal }) =>
    pageReply(
      req,
      await campaigns.list(principal().projectId, {
        limit: query?.limit ?? 20,
        cursor: query?.cursor,
        status: query?.status,
      }),
    ),
  );
  api.get<GetCampaignData, GetCampaignResponses>('/v1/campaigns/{id}', async ({ path, principal }) => ({
    status: 200,
    body: await campaigns.get(principal().projectId, path.id),
  }));
  api.post<LaunchCampaignData, LaunchCampaignResponses>(
    '/v1/campaigns/{id}/launch',
    async ({ path, principal }) => ({
      status: 200,
      body: await campaigns.launch(principal().projectId, path.id),
    }),
  );
  api.post<ScheduleCampaignData, ScheduleCampaignResponses>(
    '/v1/campaigns/{id}/schedule',
    async ({ path, body, principal }) => ({
      status: 200,
      body: await campaigns.schedule(principal().projectId, path.id, body.send_at),
    }),
  );
  api.post<PauseCampaignData, PauseCampaignResponses>(
    '/v1/campaigns/{id}/pause',
    async ({ path, principal }) => ({
      status: 200,
      body: await campaigns.pause(principal().projectId, path.id),
    }),
  );
  api.post<ResumeCampaignData, ResumeCampaignResponses>(
    '/v1/campaigns/{id}/resume',
    async ({ path, principal }) => ({
      status: 200,
      body: await campaigns.resume(principal().projectId, path.id),
    }),
  );
  api.post<CancelCampaignData, CancelCampaignResponses>(
    '/v1/campaigns/{id}/cancel',
    async ({ path, principal }) => ({
      status: 200,
      body: await campaigns.cancel(principal().projectId, path.id),
    }),
  );
  api.get<ListCampaignRecipientsData, ListCampaignRecipientsResponses>(
    '/v1/campaigns/{id}/recipients',
    async ({ path, query, req, principal }) =>
      pageReply(
        req,
        await campaigns.recipients(principal().projectId, path.id, {
          limit: query?.limit ?? 20,
          cursor: query?.cursor,
          status: query?.status,
        }),
      ),
  );

  api.get<ListRepliesData, ListRepliesResponses>('/v1/replies', async ({ query, req, principal }) => {
    // a campaign of another project is unknown here, as on GET /v1/campaigns/{id}
    if (query?.campaign_id !== undefined) await campaigns.get(principal().projectId, query.campaign_id);
    return pageReply(
      req,
      await replies.list(principal().projectId, {
        limit: query?.limit ?? 20,
        cursor: query?.cursor,
        campaignId: query?.campaign_id,
        kind: query?.kind,
      }),
    );
  });
  api.get<GetReplyData, GetReplyResponses>('/v1/replies/{id}', async ({ path, principal }) => ({
    status: 200,
    body: await replies.get(principal().projectId, path.id),
  }));

  api.get<GetUnsubscribePageData, GetUnsubscribePageResponses>(
    '/v1/unsubscribe/{token}',
    async ({ path, req, res }): Promise<typeof SENT> => {
      const who = await unsubscribes.who(path.token);
      return who ? html(res, 200, unsubscribes.askPage(who)) : invalidLink(req, res);
    },
  );
  api.post<UnsubscribeData, UnsubscribeResponses>(
    '/v1/unsubscribe/{token}',
    async ({ path, req, res }): Promise<typeof SENT> => {
      const who = await unsubscribes.who(path.token);
      if (!who) return invalidLink(req, res);
      await unsubscribes.unsubscribe(who);
      return html(res, 200, unsubscribes.donePage(who));
    },
  );

  return api.router;
}
