// The routes of plans, subscriptions and monthly statements (tag Plans of the model spec); what
// they do is in plans.ts.
import type { Plan, PlanId } from '../../generated/model/client/types.gen.ts';
import type { Authenticator } from '../accounts/auth.ts';
import { keyIdsOf } from '../accounts/store.ts';
import type { Db } from '../platform/db.ts';
import { formatEur } from '../platform/metering.ts';
import { pageReply } from '../platform/pagination.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import { PLANS, type PlanInfo, PlanStore } from './plans.ts';

export function createPlansRouter(options: { db: Db; auth: Authenticator; vatRate: string }) {
  const store = new PlanStore(options.db);
  const api: OperationRouter = operationRouter();

  /** The account's keys carry its plan in the authenticator's cache: drop them, on every instance. */
  const enforceNow = async (accountId: string) => {
    for (const id of await keyIdsOf(options.db, accountId)) await options.auth.invalidate(id);
  };

  api.on('listPlans', () => ({
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

  api.on('listSubscriptions', async ({ query, req, principal }) =>
    pageReply(req, await store.list(principal().accountId, query?.limit ?? 20, query?.cursor)),
  );

  api.on('createSubscription', async ({ body, principal }) => {
    const subscription = await store.subscribe(principal().accountId, body.plan);
    await enforceNow(principal().accountId);
    return { status: 201, body: subscription };
  });

  api.on('cancelSubscription', async ({ path, principal }) => {
    const subscription = await store.cancel(principal().accountId, path.id);
    await enforceNow(principal().accountId);
    return { status: 200, body: subscription };
  });

  api.on('getStatement', async ({ path, principal }) => ({
    status: 200,
    body: await store.statement(principal().accountId, path.month, options.vatRate),
  }));

  return api;
}
