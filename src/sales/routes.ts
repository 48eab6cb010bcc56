// The Sales routes of the directory API that src/sales owns: target lists and their members,
// campaigns and their recipients, replies, the account's suppression list, and the opt-out
// endpoints of campaign mail. Scope `sales` is checked by the security handler, as the spec
// says (the opt-out endpoints take no key: their token is signed); lists, campaigns and replies
// belong to the key's project, suppressions to its account.
import type { Request, Response } from 'express';
import { NotFoundError } from '../platform/errors.ts';
import { pageAsked, pageReply } from '../platform/pagination.ts';
import { SENT, operationRouter, type OperationRouter } from '../platform/route.ts';
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
}: SalesRouterParts) {
  const api: OperationRouter = operationRouter();

  api.on('createTargetList', async ({ body, principal }) => ({
    status: 201,
    body: await targetLists.create(principal(), body),
  }));
  api.on('listTargetLists', async ({ query, req, principal }) => {
    const { limit, cursor } = pageAsked(query);
    return pageReply(req, await targetLists.list(principal().projectId, limit, cursor));
  });
  api.on('getTargetList', async ({ path, principal }) => ({
    status: 200,
    body: await targetLists.get(principal().projectId, path.id),
  }));
  api.on('deleteTargetList', async ({ path, principal }) => {
    await targetLists.delete(principal().projectId, path.id);
    return { status: 200, body: { id: path.id, object: 'target_list', deleted: true } };
  });
  api.on('listTargetListMembers', async ({ path, query, req, principal }) =>
    pageReply(
      req,
      await targetLists.members(principal().projectId, path.id, {
        ...pageAsked(query),
        status: query?.status,
      }),
    ),
  );
  api.on('addTargetListMember', async ({ path, body, principal }) => ({
    status: 201,
    body: await targetLists.addMember(principal().projectId, path.id, body.listing_id),
  }));
  api.on('removeTargetListMember', async ({ path, principal }) => ({
    status: 200,
    body: {
      id: await targetLists.removeMember(principal().projectId, path.id, path.listing_id),
      object: 'target_list_member',
      deleted: true,
    },
  }));

  api.on('listSuppressions', async ({ query, req, principal }) =>
    pageReply(
      req,
      await suppressions.list(principal().accountId, {
        ...pageAsked(query),
        reason: query?.reason,
      }),
    ),
  );
  api.on('createSuppression', async ({ body, principal }) => {
    const { created, suppression } = await suppressions.add(principal().accountId, body.email);
    return created ? { status: 201, body: suppression } : { status: 200, body: suppression };
  });
  api.on('getSuppression', async ({ path, principal }) => ({
    status: 200,
    body: await suppressions.get(principal().accountId, path.email),
  }));
  api.on('deleteSuppression', async ({ path, principal }) => ({
    status: 200,
    body: {
      id: await suppressions.remove(principal().accountId, path.email),
      object: 'suppression',
      deleted: true,
    },
  }));

  api.on('createCampaign', async ({ body, principal }) => ({
    status: 201,
    body: await campaigns.create(principal(), body),
  }));
  api.on('listCampaigns', async ({ query, req, principal }) =>
    pageReply(
      req,
      await campaigns.list(principal().projectId, {
        ...pageAsked(query),
        status: query?.status,
      }),
    ),
  );
  api.on('getCampaign', async ({ path, principal }) => ({
    status: 200,
    body: await campaigns.get(principal().projectId, path.id),
  }));
  api.on('launchCampaign', async ({ path, principal }) => ({
    status: 200,
    body: await campaigns.launch(principal().projectId, path.id),
  }));
  api.on('scheduleCampaign', async ({ path, body, principal }) => ({
    status: 200,
    body: await campaigns.schedule(principal().projectId, path.id, body.send_at),
  }));
  api.on('pauseCampaign', async ({ path, principal }) => ({
    status: 200,
    body: await campaigns.pause(principal().projectId, path.id),
  }));
  api.on('resumeCampaign', async ({ path, principal }) => ({
    status: 200,
    body: await campaigns.resume(principal().projectId, path.id),
  }));
  api.on('cancelCampaign', async ({ path, principal }) => ({
    status: 200,
    body: await campaigns.cancel(principal().projectId, path.id),
  }));
  api.on('listCampaignRecipients', async ({ path, query, req, principal }) =>
    pageReply(
      req,
      await campaigns.recipients(principal().projectId, path.id, {
        ...pageAsked(query),
        status: query?.status,
      }),
    ),
  );

  api.on('listReplies', async ({ query, req, principal }) => {
    // a campaign of another project is unknown here, as on GET /v1/campaigns/{id}
    if (query?.campaign_id !== undefined) await campaigns.get(principal().projectId, query.campaign_id);
    return pageReply(
      req,
      await replies.list(principal().projectId, {
        ...pageAsked(query),
        campaignId: query?.campaign_id,
        kind: query?.kind,
      }),
    );
  });
  api.on('getReply', async ({ path, principal }) => ({
    status: 200,
    body: await replies.get(principal().projectId, path.id),
  }));

  api.on('getUnsubscribePage', async ({ path, req, res }): Promise<typeof SENT> => {
    const who = await unsubscribes.who(path.token);
    return who ? html(res, 200, unsubscribes.askPage(who)) : invalidLink(req, res);
  });
  api.on('unsubscribe', async ({ path, req, res }): Promise<typeof SENT> => {
    const who = await unsubscribes.who(path.token);
    if (!who) return invalidLink(req, res);
    await who.optOut();
    return html(res, 200, unsubscribes.donePage(who));
  });

  return api;
}
