// The routes of plans, subscriptions and monthly statements (tag Plans of the model spec); what
// they do is in plans.ts.
import type { Router } from 'express';
import type {
  CancelSubscriptionData,
  CancelSubscriptionResponses,
  CreateSubscriptionData,
  CreateSubscriptionResponses,
  GetStatementData,
  GetStatementResponses,
  ListPlansData,
  ListPlansResponses,
  ListSubscriptionsData,
  ListSubscriptionsResponses,
  Plan,
  PlanId,
} from '../../generated/model/client/types.gen.ts';
import type { Authenticator } from '../accounts/auth.ts';
import type { Db } from '../platform/db.ts';
import { formatEur } from '../platform/metering.ts';
import { pageReply } from '../platform/pagination.ts';
import { typedRouter } from '../platform/route.ts';
import { PLANS, type PlanInfo, PlanStore } from './plans.ts';

export function createPlansRouter(options: { db: Db; auth: Authenticator; vatRate: string }): Router {
  const store = new PlanStore(options.db);
  const api = typedRouter();

  /** The account's keys carry its plan in the authenticator's cache: drop them, on every instance. */
  const enforceNow = async (accountId: string) => {
    const keys = await options.db.query<{ id: string }>('select id from api_keys where account_id = $1', [
      accountId,
    ]);
    for (const key of keys) await options.auth.invalidate(key.id);
  };

  api.get<ListPlansData, ListPlansResponses>('/v1/plans', () => ({
    status: 200,
    body: {
      object: 'list',
      data: (Object.entries(PLANS) as Array<[PlanId, PlanInfo]>).map(([id, plan]): Plan => ({
        id,
        object: 'plan',
        name: plan.name,
        description: plan.description,
        monthly_price: formatEur(plan.monthlyNano),
        currency: 'EUR',
      })),
      has_more: false,
      next_cursor: null,
    },
  }));

  api.get<ListSubscriptionsData, ListSubscriptionsResponses>(
    '/v1/subscriptions',
    async ({ query, req, principal }) =>
      pageReply(req, await store.list(principal().accountId, query?.limit ?? 20, query?.cursor)),
  );

  api.post<CreateSubscriptionData, CreateSubscriptionResponses>(
    '/v1/subscriptions',
    async ({ body, principal }) => {
      const subscription = await store.subscribe(principal().accountId, body.plan);
      await enforceNow(principal().accountId);
      return { status: 201, body: subscription };
    },
  );

  api.delete<CancelSubscriptionData, CancelSubscriptionResponses>(
    '/v1/subscriptions/{id}',
    async ({ path, principal }) => {
      const subscription = await store.cancel(principal().accountId, path.id);
      await enforceNow(principal().accountId);
      return { status: 200, body: subscription };
    },
  );

  api.get<GetStatementData, GetStatementResponses>('/v1/statements/{month}', async ({ path, principal }) => ({
    status: 200,
    body: await store.statement(principal().accountId, path.month, options.vatRate),
  }));

  return api.router;
}
