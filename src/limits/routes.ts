// An account's rate limits, read and set by the operator alone (`admin` key of the operator's
// account): custom limits of an enterprise contract replace the plan's figure by figure and act
// on the next request on every instance (`changed` drops the account's cached keys everywhere).
import type { Queryable } from '../platform/db.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { type IsOperator, operatorOnly } from '../platform/operator.ts';
import type { CustomLimits } from '../platform/principal.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import { accountLimits, AccountLimitsStore } from './account-limits.ts';
import { directoryFigures, type LimitSettings } from './policies.ts';

export interface LimitsRouterDeps {
  db: Queryable;
  settings: LimitSettings;
  /** An account's plan, undefined when there is no such account (the accounts store's). */
  planOf(accountId: string): Promise<string | undefined>;
  /** Whether an account is the operator's (the accounts store's): only it reads and sets limits. */
  isOperator: IsOperator;
  /** Called once an account's limits changed: its keys' cached limits are dropped on every instance. */
  changed(accountId: string): Promise<void>;
}

export function createLimitsRouter(deps: LimitsRouterDeps) {
  const api: OperationRouter = operationRouter();
  const store = new AccountLimitsStore(deps.db);

  async function planOf(accountId: string): Promise<string> {
    const plan = await deps.planOf(accountId);
    if (plan === undefined) {
      throw new NotFoundError('not_found', `No account with id '${accountId}' exists.`, {
        param: 'account_id',
      });
    }
    return plan;
  }

  async function current(accountId: string) {
    const plan = await planOf(accountId);
    const { limits, updated } = await store.get(accountId);
    return accountLimits(accountId, { plan, limits }, updated, deps.settings);
  }

  api.on('getAccountLimits', async ({ path, principal }) => {
    await operatorOnly(deps.isOperator, principal().accountId, "read an account's limits");
    return { status: 200, body: await current(path.account_id) };
  });

  api.on('setAccountLimits', async ({ path, body, principal }) => {
    await operatorOnly(deps.isOperator, principal().accountId, "set an account's limits");
    const plan = await planOf(path.account_id);
    const limits: CustomLimits = {
      modelRpm: body.model?.requests_per_minute,
      modelTpm: body.model?.tokens_per_minute,
      imagesPerMinute: body.model?.images_per_minute,
      audioSecondsPerMinute: body.model?.audio_seconds_per_minute,
      directoryRps: body.directory?.requests_per_second,
      directoryBurst: body.directory?.burst_per_second,
      directoryBurstSeconds: body.directory?.burst_seconds,
      directoryDailyQuota: body.directory?.daily_quota,
    };
    const { rps, burst } = directoryFigures({ plan, limits }, deps.settings);
    if (burst < rps) {
      throw new BadRequestError(
        'burst_below_sustained',
        `The burst ceiling (${burst} a second) must be at least the sustained rate (${rps} a second).`,
        { param: 'directory.burst_per_second' },
      );
    }
    await store.set(path.account_id, limits);
    await deps.changed(path.account_id);
    return { status: 200, body: await current(path.account_id) };
  });

  api.on('removeAccountLimits', async ({ path, principal }) => {
    await operatorOnly(deps.isOperator, principal().accountId, "remove an account's limits");
    await planOf(path.account_id);
    await store.remove(path.account_id);
    await deps.changed(path.account_id);
    return { status: 200, body: await current(path.account_id) };
  });

  return api;
}
