// Plans, subscriptions and monthly statements (tag Plans of the model spec). Pay-as-you-go is
// what an account has without a subscription. Search unlimited changes what the directory API
// enforces through accounts.plan (src/limits/policies.ts: a fair use of 50,000 searches a day;
// src/directory/routes.ts: searches not metered); Sales and Concierge are recorded and billed.
// A statement bills each subscription pro rata by the second and lists the month's metered
// usage from the usage records (the same records GET /v1/usage sums), then VAT at VAT_RATE.
import type {
  PlanId,
  Statement,
  StatementLine,
  Subscription,
} from '../../generated/model/client/types.gen.ts';
import { setPlan } from '../accounts/store.ts';
import { nowSeconds } from '../platform/clock.ts';
import type { Db, Queryable } from '../platform/db.ts';
import { ConflictError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { type Page, pageNewestFirst } from '../platform/pagination.ts';
import { flushUsage, formatEur, NANO_PER_EUR, priceText } from '../platform/metering.ts';
import { usageByModel } from '../platform/usage-records.ts';

export interface PlanInfo {
  name: string;
  description: string;
  monthlyNano: number;
  /** accounts.plan while subscribed, when the plan changes what the API enforces. */
  enforces?: string;
}

/** What each human reply to a Sales campaign costs, on top of the plan (docs/sales.md). */
export const SALES_REPLY_NANO = NANO_PER_EUR / 2;

export const PLANS: Record<PlanId, PlanInfo> = {
  pay_as_you_go: {
    name: 'Pay as you go',
    description: 'The default: every call is metered at the prices of the model catalogue and the directory.',
    monthlyNano: 0,
  },
  search_unlimited: {
    name: 'Search unlimited',
    description:
      'Directory searches are not metered; fair use of 50,000 searches a day (then 429 until midnight UTC).',
    monthlyNano: 199 * NANO_PER_EUR,
    enforces: 'search_unlimited',
  },
  sales: {
    name: 'Sales',
    description: `Sales outreach on the directory API: launching, scheduling and resuming campaigns needs it (target lists, sending domains and drafts do not); each human reply is billed ${priceText(SALES_REPLY_NANO)} on top.`,
    monthlyNano: 199 * NANO_PER_EUR,
  },
  concierge: {
    name: 'Concierge',
    description: 'The concierge agent on the directory API.',
    monthlyNano: 99 * NANO_PER_EUR,
  },
};

/** Whether the account has an active subscription to `plan` now (the Sales plan gates sending). */
export async function hasActivePlan(db: Queryable, accountId: string, plan: PlanId): Promise<boolean> {
  const rows = await db.query(
    `select 1 from subscriptions where account_id = $1 and plan = $2 and status = 'active' limit 1`,
    [accountId, plan],
  );
  return rows.length > 0;
}

interface SubscriptionRow {
  id: string;
  account_id: string;
  plan: string;
  status: string;
  started_at: number;
  canceled_at: number | null;
  created: number;
}

const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id,
  object: 'subscription',
  plan: row.plan as PlanId,
  status: row.status as Subscription['status'],
  started_at: Number(row.started_at),
  canceled_at: row.canceled_at === null ? null : Number(row.canceled_at),
  created: Number(row.created),
});

const isoDay = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10);

/** `21` or `20.5` (percent) as basis points; the configuration checked the form. */
const basisPoints = (rate: string) => Math.round(Number(rate) * 100);

export class PlanStore {
  readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async subscribe(accountId: string, plan: PlanId): Promise<Subscription> {
    const now = nowSeconds();
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<SubscriptionRow>(
        `insert into subscriptions (id, account_id, plan, status, started_at, created) values ($1, $2, $3, 'active', $4, $4)
         on conflict (account_id, plan) where status = 'active' do nothing returning *`,
        [newId('sub'), accountId, plan, now],
      );
      if (!row) {
        throw new ConflictError(
          'already_subscribed',
          `The account already has an active '${plan}' subscription.`,
          {
            param: 'plan',
          },
        );
      }
      const enforces = PLANS[plan].enforces;
      if (enforces) await setPlan(tx, accountId, enforces);
      return toSubscription(row);
    });
  }

  async cancel(accountId: string, id: string): Promise<Subscription> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<SubscriptionRow>(
        `update subscriptions set status = 'canceled', canceled_at = $3
         where account_id = $1 and id = $2 and status = 'active' returning *`,
        [accountId, id, nowSeconds()],
      );
      if (!row) {
        // Cancelled already (answered again, nothing changes), or not the account's.
        const [old] = await tx.query<SubscriptionRow>(
          'select * from subscriptions where account_id = $1 and id = $2',
          [accountId, id],
        );
        if (!old)
          throw new NotFoundError('not_found', `No subscription with id '${id}' exists.`, { param: 'id' });
        return toSubscription(old);
      }
      const enforces = PLANS[row.plan as PlanId]?.enforces;
      if (enforces) {
        await setPlan(tx, accountId, 'standard', enforces);
      }
      return toSubscription(row);
    });
  }

  async list(accountId: string, limit: number, cursor?: string): Promise<Page<Subscription>> {
    return pageNewestFirst(
      this.db,
      'select * from subscriptions where account_id = $1',
      [accountId],
      { limit, cursor },
      toSubscription,
    );
  }

  async statement(accountId: string, month: string, vatRate: string, now = nowSeconds()): Promise<Statement> {
    const [year, mon] = month.split('-').map(Number) as [number, number];
    const start = Date.UTC(year, mon - 1, 1) / 1000;
    const end = Date.UTC(year, mon, 1) / 1000;
    const lines: StatementLine[] = [];
    let subtotal = 0;
    const subs = await this.db.query<SubscriptionRow>(
      `select * from subscriptions where account_id = $1 and started_at < $3 and (canceled_at is null or canceled_at > $2)
       order by started_at, id`,
      [accountId, start, end],
    );
    for (const sub of subs) {
      const from = Math.max(Number(sub.started_at), start);
      const until = Math.min(sub.canceled_at === null ? Math.min(now, end) : Number(sub.canceled_at), end);
      if (until < from) continue;
      const info = PLANS[sub.plan as PlanId];
      const amount = Math.round((info.monthlyNano * (until - from)) / (end - start));
      subtotal += amount;
      lines.push({
        kind: 'subscription',
        description: `${info.name}, ${isoDay(from)} to ${isoDay(Math.max(from, until - 1))}`,
        quantity: Math.round(((until - from) / 86_400) * 1000) / 1000,
        amount: formatEur(amount),
      });
    }
    await flushUsage(this.db);
    const usage = await usageByModel(this.db, accountId, isoDay(start), isoDay(end));
    for (const row of usage) {
      const cost = Number(row.cost);
      subtotal += cost;
      lines.push({
        kind: 'usage',
        description: `${row.service === 'model' ? 'Model API' : 'Directory API'}: ${row.model}`,
        quantity: Number(row.requests),
        amount: formatEur(cost),
      });
    }
    const vat = Math.round((subtotal * basisPoints(vatRate)) / 10_000);
    return {
      object: 'statement',
      account_id: accountId,
      month,
      currency: 'EUR',
      lines,
      subtotal: formatEur(subtotal),
      vat_rate: vatRate,
      vat: formatEur(vat),
      total: formatEur(subtotal + vat),
    };
  }
}
